import unittest

from textkit.truncate import truncate


class TruncateTest(unittest.TestCase):
    def test_short_text_is_unchanged(self):
        self.assertEqual(truncate("hello", 10), "hello")

    def test_cut_between_words(self):
        self.assertEqual(truncate("The quick brown fox", 10), "The quick…")

    def test_tiny_length_gives_only_the_ellipsis(self):
        self.assertEqual(truncate("hello", 1), "…")
