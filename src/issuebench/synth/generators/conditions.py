"""Invert a condition: the test of an `if`, `while`, or conditional expression."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from issuebench.synth.base import AstMutator
from issuebench.synth.source import Edit, Function

_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


class InvertCondition(AstMutator):
    name = "cond_invert"

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        for node in fn.nodes():
            if not isinstance(node, (ast.If, ast.While, ast.IfExp)):
                continue
            test = node.test
            start, end = fn.index.span(test)
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                inner = fn.index.text(test.operand)
                if isinstance(test.operand, (ast.BoolOp, ast.IfExp, ast.NamedExpr, ast.Lambda)):
                    inner = f"({inner})"
                yield [Edit(start, end, inner)], "drop not"
            else:
                text = fn.index.source[start:end]
                if "\n" in text:
                    continue
                new = f"not {text}" if isinstance(test, _ATOMIC) else f"not ({text})"
                yield [Edit(start, end, new)], "negate"
