"""Change a constant: integers off by one, booleans flipped, `len(x)` one short."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from issuebench.synth.base import AstMutator
from issuebench.synth.source import Edit, Function


class ChangeConstant(AstMutator):
    name = "const"

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        for node in fn.nodes():
            if isinstance(node, ast.Constant) and type(node.value) is bool:
                start, end = fn.index.span(node)
                yield [Edit(start, end, str(not node.value))], f"{node.value} -> {not node.value}"
            elif isinstance(node, ast.Constant) and type(node.value) is int:
                start, end = fn.index.span(node)
                text = fn.index.source[start:end]
                if not text.isdigit():
                    continue  # hex, underscores: leave alone
                value = node.value
                yield [Edit(start, end, str(value + 1))], f"{value} -> {value + 1}"
                if value > 0:
                    yield [Edit(start, end, str(value - 1))], f"{value} -> {value - 1}"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
                    and len(node.args) == 1 and not node.keywords:
                start, end = fn.index.span(node)
                yield [Edit(end, end, " - 1")], "len() - 1"
