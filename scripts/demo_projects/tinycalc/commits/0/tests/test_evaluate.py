import unittest

from tinycalc import CalcError, evaluate


class ArithmeticTest(unittest.TestCase):
    def test_precedence(self):
        self.assertEqual(evaluate("1 + 2 * 3"), 7)

    def test_parentheses(self):
        self.assertEqual(evaluate("(1 + 2) * 3"), 9)

    def test_true_division(self):
        self.assertEqual(evaluate("7 / 2"), 3.5)

    def test_power_is_right_associative(self):
        self.assertEqual(evaluate("2 ** 3 ** 2"), 512)

    def test_negative_exponent(self):
        self.assertEqual(evaluate("2 ** -1"), 0.5)

    def test_unary_minus(self):
        self.assertEqual(evaluate("-3 + 5"), 2)
        self.assertEqual(evaluate("--3"), 3)

    def test_division_by_zero(self):
        with self.assertRaises(CalcError) as caught:
            evaluate("1 / (2 - 2)")
        self.assertEqual(caught.exception.position, 2)


class NamesTest(unittest.TestCase):
    def test_variables(self):
        self.assertEqual(evaluate("x * y", {"x": 3, "y": 4}), 12)

    def test_function_call(self):
        self.assertEqual(evaluate("max(1, 5, 3)"), 5)

    def test_unknown_function(self):
        with self.assertRaises(CalcError):
            evaluate("nope(1)")


class SyntaxErrorTest(unittest.TestCase):
    def test_trailing_operator(self):
        with self.assertRaises(CalcError):
            evaluate("1 +")

    def test_unbalanced_parenthesis(self):
        with self.assertRaises(CalcError) as caught:
            evaluate("(1 + 2")
        self.assertIn("')'", str(caught.exception))
