"""Operations on collections of intervals."""

from spans.interval import Interval


def merge(intervals):
    """The union of `intervals` as a sorted list of disjoint intervals; touching ones are joined."""
    merged = []
    for interval in sorted(intervals):
        if merged and interval.start <= merged[-1].end:
            merged[-1] = Interval(merged[-1].start, interval.end)
        else:
            merged.append(interval)
    return merged


def total_length(intervals):
    """The length covered by the union of `intervals`, counting overlaps once."""
    return sum(interval.length for interval in merge(intervals))


def gaps(intervals, within):
    """The parts of `within` not covered by any of `intervals`, in order."""
    result = []
    cursor = within.start
    for interval in merge(intervals):
        if interval.end <= cursor:
            continue
        if interval.start >= within.end:
            break
        if interval.start > cursor:
            result.append(Interval(cursor, interval.start))
        cursor = max(cursor, interval.end)
    if cursor < within.end:
        result.append(Interval(cursor, within.end))
    return result
