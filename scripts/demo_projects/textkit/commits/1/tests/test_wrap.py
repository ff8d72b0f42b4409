import unittest

from textkit.wrap import fill, wrap


class WrapTest(unittest.TestCase):
    def test_short_text_is_one_line(self):
        self.assertEqual(wrap("hello world", 70), ["hello world"])

    def test_breaks_between_words(self):
        self.assertEqual(wrap("the quick brown fox", 10), ["the quick", "brown fox"])

    def test_long_word_is_cut(self):
        self.assertEqual(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"])

    def test_whitespace_is_collapsed(self):
        self.assertEqual(wrap("  a \n b\t c  ", 70), ["a b c"])

    def test_empty_text(self):
        self.assertEqual(wrap("", 10), [])

    def test_width_must_be_positive(self):
        with self.assertRaises(ValueError):
            wrap("text", 0)


class FillTest(unittest.TestCase):
    def test_fill_indents_every_line(self):
        self.assertEqual(fill("one two three", width=12, indent="  "), "  one two\n  three")
