"""Flip an operator (`+`→`-`, `<`→`<=`, `and`→`or`, `+=`→`-=`) or swap the operands around one.

Only the operator's own characters change, found in the text between the two operands.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from itertools import pairwise

from issuebench.synth.base import AstMutator
from issuebench.synth.source import Edit, Function

BINOP = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "+"), ast.Div: ("/", "//"),
         ast.FloorDiv: ("//", "/"), ast.Mod: ("%", "//"), ast.Pow: ("**", "*"), ast.LShift: ("<<", ">>"),
         ast.RShift: (">>", "<<"), ast.BitOr: ("|", "&"), ast.BitAnd: ("&", "|"), ast.BitXor: ("^", "|")}
CMPOP = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
         ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"),
         ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in")}
BOOLOP = {ast.And: ("and", "or"), ast.Or: ("or", "and")}
NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _token_pattern(symbol: str) -> re.Pattern[str]:
    if symbol[0].isalpha():
        return re.compile(r"(?<![\w])" + symbol.replace(" ", r"\s+") + r"(?![\w])")
    # `<` must not match inside `<=` or `<<`; `*` not inside `**`; `/` not inside `//`.
    return re.compile(r"(?<![<>=!*/])" + re.escape(symbol) + r"(?![<>=*/])")


def replace_between(fn: Function, left: ast.AST, right: ast.AST, old: str, new: str) -> list[Edit] | None:
    """An edit turning the one `old` operator between two nodes into `new`."""
    start = fn.index.span(left)[1]
    end = fn.index.span(right)[0]
    gap = fn.index.source[start:end]
    if "#" in gap:
        return None
    matches = list(_token_pattern(old).finditer(gap))
    if len(matches) != 1:
        return None
    m = matches[0]
    return [Edit(start + m.start(), start + m.end(), new)]


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))


class FlipOperator(AstMutator):
    name = "op_flip"

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        for node in fn.nodes():
            if isinstance(node, ast.BinOp) and type(node.op) in BINOP:
                if _is_str(node.left) or _is_str(node.right):
                    continue  # string formatting / concatenation: a type error, not a bug
                old, new = BINOP[type(node.op)]
                edits = replace_between(fn, node.left, node.right, old, new)
                if edits:
                    yield edits, f"{old} -> {new}"
            elif isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                for i, op in enumerate(node.ops):
                    old, new = CMPOP[type(op)]
                    edits = replace_between(fn, operands[i], operands[i + 1], old, new)
                    if edits:
                        yield edits, f"{old} -> {new}"
            elif isinstance(node, ast.BoolOp):
                old, new = BOOLOP[type(node.op)]
                for a, b in pairwise(node.values):
                    edits = replace_between(fn, a, b, old, new)
                    if edits:
                        yield edits, f"{old} -> {new}"
                        break
            elif isinstance(node, ast.AugAssign) and type(node.op) in BINOP:
                old, new = BINOP[type(node.op)]
                edits = replace_between(fn, node.target, node.value, old + "=", new + "=")
                if edits:
                    yield edits, f"{old}= -> {new}="


class SwapOperands(AstMutator):
    name = "op_swap"

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        for node in fn.nodes():
            if isinstance(node, ast.BinOp) and isinstance(node.op, NON_COMMUTATIVE):
                pair = (node.left, node.right)
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ORDERING):
                pair = (node.left, node.comparators[0])
            else:
                continue
            if _is_str(pair[0]) or isinstance(pair[0], (ast.BinOp, ast.BoolOp, ast.Compare)) \
                    or isinstance(pair[1], (ast.BinOp, ast.BoolOp, ast.Compare)):
                continue  # precedence would change the meaning in ways a reader cannot see
            a, b = fn.index.span(pair[0]), fn.index.span(pair[1])
            ta, tb = fn.index.text(pair[0]), fn.index.text(pair[1])
            if ta == tb:
                continue
            yield [Edit(a[0], a[1], tb), Edit(b[0], b[1], ta)], "swap operands"
