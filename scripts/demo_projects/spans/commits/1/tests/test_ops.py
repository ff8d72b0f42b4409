import unittest

from spans.interval import Interval
from spans.ops import gaps, merge, total_length


class MergeTest(unittest.TestCase):
    def test_overlapping_intervals_are_joined(self):
        self.assertEqual(merge([Interval(1, 4), Interval(3, 6)]), [Interval(1, 6)])

    def test_touching_intervals_are_joined(self):
        self.assertEqual(merge([Interval(1, 3), Interval(3, 5)]), [Interval(1, 5)])

    def test_disjoint_intervals_are_kept_in_order(self):
        self.assertEqual(merge([Interval(5, 6), Interval(1, 2)]), [Interval(1, 2), Interval(5, 6)])

    def test_empty_input(self):
        self.assertEqual(merge([]), [])


class TotalLengthTest(unittest.TestCase):
    def test_overlap_counted_once(self):
        self.assertEqual(total_length([Interval(0, 5), Interval(3, 8)]), 8)


class GapsTest(unittest.TestCase):
    def test_gaps_between_intervals(self):
        self.assertEqual(gaps([Interval(2, 3), Interval(5, 6)], Interval(0, 10)),
                         [Interval(0, 2), Interval(3, 5), Interval(6, 10)])

    def test_no_gaps_when_covered(self):
        self.assertEqual(gaps([Interval(-1, 11)], Interval(0, 10)), [])
