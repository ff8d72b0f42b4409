import unittest

from tinycalc.tokens import CalcError, tokenize


class TokenizeTest(unittest.TestCase):
    def kinds(self, source):
        return [(token.kind, token.text) for token in tokenize(source)]

    def test_numbers_names_and_operators(self):
        self.assertEqual(self.kinds("x1 + 2.5"),
                         [("name", "x1"), ("op", "+"), ("number", "2.5"), ("end", "")])

    def test_double_star_is_one_operator(self):
        self.assertEqual(self.kinds("2**3")[1], ("op", "**"))

    def test_positions(self):
        self.assertEqual([token.position for token in tokenize(" a +b")], [1, 3, 4, 5])

    def test_unexpected_character(self):
        with self.assertRaises(CalcError) as caught:
            tokenize("1 $ 2")
        self.assertEqual(caught.exception.position, 2)
