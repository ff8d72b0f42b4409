"""Evaluate expressions with variables and a few functions."""

import math
import operator

from tinycalc.parser import parse
from tinycalc.tokens import CalcError

FUNCTIONS = {"abs": abs, "max": max, "min": min, "round": round, "sqrt": math.sqrt}
CONSTANTS = {"e": math.e, "pi": math.pi, "tau": math.tau}
BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "%": operator.mod,
    "**": operator.pow,
}


def evaluate(source, variables=None):
    """The value of the expression `source`; names are looked up in `variables`, then in
    CONSTANTS."""
    names = dict(CONSTANTS)
    names.update(variables or {})
    return _evaluate(parse(source), names)


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
