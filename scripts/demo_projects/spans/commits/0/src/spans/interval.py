"""Half-open intervals [start, end) over any ordered values: numbers, dates, datetimes."""


class Interval:
    """The values x with start <= x < end. An interval with start == end is empty."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        if end < start:
            raise ValueError("interval end %r is before its start %r" % (end, start))
        self.start = start
        self.end = end

    def __repr__(self):
        return "Interval(%r, %r)" % (self.start, self.end)

    def __eq__(self, other):
        if not isinstance(other, Interval):
            return NotImplemented
        return (self.start, self.end) == (other.start, other.end)

    def __lt__(self, other):
        return (self.start, self.end) < (other.start, other.end)

    def __hash__(self):
        return hash((self.start, self.end))

    @property
    def length(self):
        return self.end - self.start

    def is_empty(self):
        return self.start == self.end

    def contains(self, value):
        return self.start <= value < self.end

    def overlaps(self, other):
        """True when the two intervals share at least one value."""
        return self.start <= other.end and other.start <= self.end
