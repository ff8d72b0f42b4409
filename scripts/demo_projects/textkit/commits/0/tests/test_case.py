import unittest

from textkit.case import camel_case, kebab_case, pascal_case, snake_case, split_words, title_case


class SplitWordsTest(unittest.TestCase):
    def test_camel_identifier(self):
        self.assertEqual(split_words("userName"), ["user", "Name"])

    def test_separators_are_dropped(self):
        self.assertEqual(split_words("user-name_value here"), ["user", "name", "value", "here"])

    def test_digits_are_words(self):
        self.assertEqual(split_words("page2Title"), ["page", "2", "Title"])


class ConversionTest(unittest.TestCase):
    def test_snake_case(self):
        self.assertEqual(snake_case("Hello World"), "hello_world")

    def test_kebab_case(self):
        self.assertEqual(kebab_case("someValue"), "some-value")

    def test_camel_case(self):
        self.assertEqual(camel_case("user_id_field"), "userIdField")

    def test_pascal_case(self):
        self.assertEqual(pascal_case("make me a class"), "MakeMeAClass")

    def test_empty_string(self):
        self.assertEqual(camel_case(""), "")
        self.assertEqual(snake_case(""), "")


class TitleCaseTest(unittest.TestCase):
    def test_minor_words_stay_lower(self):
        self.assertEqual(title_case("the lord of the rings"), "The Lord of the Rings")

    def test_last_word_is_capitalised(self):
        self.assertEqual(title_case("what are you made of"), "What Are You Made Of")
