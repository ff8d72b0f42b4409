"""Where test-strength gets its mutants: a small Protocol, and the generator behind it.

`Mutator` is all the audit needs: given a file's text and the lines the gold patch changed, yield
whole mutated texts. The project's synth package generates mutants of a file's line range
(strength.synth_adapter, the default); `OperatorFlip` is the small one: one flipped operator or constant per mutant (== / !=, < / >=, + / -, and / or, True / False, n / n + 1), the
classic operators of mutation testing, applied by editing the token's text so the rest of the
file stays byte for byte.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Mutant:
    path: str
    line: int
    description: str   # e.g. "line 12: '<' -> '>='"
    text: str          # the whole mutated file


class Mutator(Protocol):
    def mutants(self, path: str, text: str, lines: set[int]) -> Iterable[Mutant]: ...


_CMP = {ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Lt: ("<", ">="), ast.GtE: (">=", "<"),
        ast.Gt: (">", "<="), ast.LtE: ("<=", ">"), ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is"),
        ast.In: ("in", "not in"), ast.NotIn: ("not in", "in")}
_BIN = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"),
        ast.FloorDiv: ("//", "*"), ast.Mod: ("%", "//")}
_BOOL = {ast.And: ("and", "or"), ast.Or: ("or", "and")}


class OperatorFlip:
    """One operator or constant flipped per mutant, on the given lines only."""

    def mutants(self, path: str, text: str, lines: set[int]) -> Iterator[Mutant]:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return
        src_lines = text.splitlines(keepends=True)
        seen: set[str] = set()
        for node in ast.walk(tree):
            for line, col_from, col_to, old, new in _edits(node):
                if line not in lines or line > len(src_lines):
                    continue
                mutated = _replace(src_lines, line, col_from, col_to, old, new)
                if mutated is None or mutated in seen:
                    continue
                seen.add(mutated)
                yield Mutant(path, line, f"line {line}: {old!r} -> {new!r}", mutated)


def _edits(node: ast.AST) -> Iterator[tuple[int, int, int, str, str]]:
    """(line, search from col, search to col, old token, new token) for each flip `node` offers."""
    if isinstance(node, ast.Compare):
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=False):
            pair = _CMP.get(type(op))
            if pair and left.end_lineno == right.lineno:
                yield right.lineno, left.end_col_offset or 0, right.col_offset, *pair
            left = right
    elif isinstance(node, ast.BinOp):
        pair = _BIN.get(type(node.op))
        if pair and node.left.end_lineno == node.right.lineno:
            yield node.right.lineno, node.left.end_col_offset or 0, node.right.col_offset, *pair
    elif isinstance(node, ast.BoolOp):
        pair = _BOOL.get(type(node.op))
        for a, b in zip(node.values, node.values[1:], strict=False):
            if pair and a.end_lineno == b.lineno:
                yield b.lineno, a.end_col_offset or 0, b.col_offset, *pair
    elif isinstance(node, ast.Constant) and node.lineno == node.end_lineno:
        if node.value is True or node.value is False:
            yield node.lineno, node.col_offset, node.end_col_offset or 0, str(node.value), str(not node.value)
        elif type(node.value) is int:
            old = f"{node.value}"
            yield node.lineno, node.col_offset, node.end_col_offset or 0, old, f"{node.value + 1}"


def _replace(src_lines: list[str], line: int, col_from: int, col_to: int, old: str, new: str) -> str | None:
    """The file with `old` replaced by `new` once, between the two columns of `line` (as bytes: ast's
    offsets are UTF-8 byte offsets)."""
    raw = src_lines[line - 1].encode()
    gap = raw[col_from:col_to]
    at = _token_at(gap.decode(errors="replace"), old)
    if at < 0:
        return None
    start = col_from + len(gap.decode(errors="replace")[:at].encode())
    mutated = raw[:start] + new.encode() + raw[start + len(old.encode()):]
    out = list(src_lines)
    out[line - 1] = mutated.decode()
    return "".join(out)


def _token_at(gap: str, token: str) -> int:
    """Where `token` stands alone in `gap` (words need non-word neighbours; '<' is not '<=')."""
    i = gap.find(token)
    while i >= 0:
        before = gap[i - 1] if i else " "
        after = gap[i + len(token)] if i + len(token) < len(gap) else " "
        word = token[0].isalnum()
        ok = (not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_")) if word \
            else (before not in "<>=!*/" and after not in "<>=*/")
        if ok:
            return i
        i = gap.find(token, i + 1)
    return -1
