"""Evaluate expressions with variables and a few functions."""

import operator

from tinycalc.parser import parse
from tinycalc.tokens import CalcError

FUNCTIONS = {"abs": abs, "max": max, "min": min}
BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "%": operator.mod,
    "**": operator.pow,
}


def evaluate(source, variables=None):
    """The value of the expression `source`, with names looked up in `variables`."""
    return _evaluate(parse(source), dict(variables or {}))


def _evaluate(node, names):
    kind = node[0]
    if kind == "number":
        return node[1]
    if kind == "name":
        return names[node[1]]
    if kind == "negate":
        return -_evaluate(node[1], names)
    if kind == "call":
        _, name, arguments, position = node
        function = FUNCTIONS.get(name)
        if function is None:
            raise CalcError("unknown function %r" % name, position)
        return function(*[_evaluate(argument, names) for argument in arguments])
    _, symbol, left, right, position = node
    left_value = _evaluate(left, names)
    right_value = _evaluate(right, names)
    if symbol in ("/", "%") and right_value == 0:
        raise CalcError("division by zero", position)
    return BINARY[symbol](left_value, right_value)
