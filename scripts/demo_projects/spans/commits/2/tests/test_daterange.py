import unittest
from datetime import date

from spans.daterange import DateRange
from spans.interval import Interval


class DateRangeTest(unittest.TestCase):
    def test_rejects_reversed_range(self):
        with self.assertRaises(ValueError):
            DateRange(date(2024, 3, 2), date(2024, 3, 1))

    def test_parse(self):
        self.assertEqual(DateRange.parse("2024-01-01..2024-01-31"),
                         DateRange(date(2024, 1, 1), date(2024, 1, 31)))

    def test_parse_error_names_the_text(self):
        with self.assertRaises(ValueError) as caught:
            DateRange.parse("January")
        self.assertIn("January", str(caught.exception))

    def test_contains_both_ends(self):
        march = DateRange(date(2024, 3, 1), date(2024, 3, 31))
        self.assertIn(date(2024, 3, 1), march)
        self.assertIn(date(2024, 3, 31), march)
        self.assertNotIn(date(2024, 4, 1), march)

    def test_to_interval(self):
        self.assertEqual(DateRange(date(2024, 3, 1), date(2024, 3, 2)).to_interval(),
                         Interval(date(2024, 3, 1), date(2024, 3, 3)))
