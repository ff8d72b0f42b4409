"""Inclusive ranges of calendar days, as used in bookings and reports."""

from datetime import date, timedelta

from spans.interval import Interval


class DateRange:
    """The days from `first` to `last`, both included."""

    __slots__ = ("first", "last")

    def __init__(self, first, last):
        if last < first:
            raise ValueError("range ends on %s, before it starts on %s" % (last, first))
        self.first = first
        self.last = last

    @classmethod
    def parse(cls, text):
        """DateRange.parse("2024-01-01..2024-01-31")."""
        try:
            first, last = text.split("..")
            return cls(date.fromisoformat(first.strip()), date.fromisoformat(last.strip()))
        except ValueError as error:
            raise ValueError("not a date range %r: %s" % (text, error)) from None

    def __repr__(self):
        return "DateRange(%r, %r)" % (self.first, self.last)

    def __eq__(self, other):
        if not isinstance(other, DateRange):
            return NotImplemented
        return (self.first, self.last) == (other.first, other.last)

    def __hash__(self):
        return hash((self.first, self.last))

    def __len__(self):
        return (self.last - self.first).days

    def __contains__(self, day):
        return self.first <= day <= self.last

    def __iter__(self):
        for offset in range(len(self)):
            yield self.first + timedelta(days=offset)

    def to_interval(self):
        """The same days as a half-open Interval of dates."""
        return Interval(self.first, self.last + timedelta(days=1))
