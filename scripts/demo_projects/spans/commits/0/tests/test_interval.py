import unittest
from datetime import date, timedelta

from spans.interval import Interval


class IntervalTest(unittest.TestCase):
    def test_rejects_end_before_start(self):
        with self.assertRaises(ValueError):
            Interval(5, 1)

    def test_length_and_emptiness(self):
        self.assertEqual(Interval(2, 7).length, 5)
        self.assertTrue(Interval(3, 3).is_empty())

    def test_contains_is_half_open(self):
        interval = Interval(0, 10)
        self.assertTrue(interval.contains(0))
        self.assertTrue(interval.contains(9.5))
        self.assertFalse(interval.contains(10))

    def test_works_with_dates(self):
        may = Interval(date(2024, 5, 1), date(2024, 6, 1))
        self.assertTrue(may.contains(date(2024, 5, 31)))
        self.assertEqual(may.length, timedelta(days=31))

    def test_sorting(self):
        self.assertEqual(sorted([Interval(3, 4), Interval(1, 9), Interval(1, 2)]),
                         [Interval(1, 2), Interval(1, 9), Interval(3, 4)])


class OverlapTest(unittest.TestCase):
    def test_overlapping(self):
        self.assertTrue(Interval(0, 5).overlaps(Interval(4, 8)))

    def test_disjoint(self):
        self.assertFalse(Interval(0, 2).overlaps(Interval(3, 4)))

    def test_contained(self):
        self.assertTrue(Interval(0, 10).overlaps(Interval(2, 3)))
