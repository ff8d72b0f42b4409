import unittest

from textkit.slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_punctuation_becomes_separator(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_accents_are_removed(self):
        self.assertEqual(slugify("Crème Brûlée"), "creme-brulee")

    def test_custom_separator(self):
        self.assertEqual(slugify("a b c", sep="_"), "a_b_c")

    def test_no_leading_or_trailing_separator(self):
        self.assertEqual(slugify("  --Hello--  "), "hello")

    def test_max_length_long_single_word(self):
        self.assertEqual(slugify("abcdefghij", max_length=4), "abcd")

    def test_max_length_not_reached(self):
        self.assertEqual(slugify("short title", max_length=50), "short-title")
