"""Python source as edits: functions of a file, node spans, and minimal text edits.

Mutations are applied as small text edits at the exact span of the node they change (never by
re-printing the whole function), so a gold patch is as small as the bug and the rest of the file,
comments and formatting included, stays as it was.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] (character offsets) with text."""

    start: int
    end: int
    text: str


class SourceIndex:
    """Character offsets of (line, UTF-8 byte column) positions, as ast reports them."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self._starts: list[int] = []
        pos = 0
        for line in self.lines:
            self._starts.append(pos)
            pos += len(line)
        self._starts.append(pos)

    def offset(self, lineno: int, col: int) -> int:
        if lineno - 1 >= len(self.lines):
            return len(self.source)
        line = self.lines[lineno - 1]
        return self._starts[lineno - 1] + len(line.encode()[:col].decode(errors="replace"))

    def line_start(self, lineno: int) -> int:
        return self._starts[lineno - 1]

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def whole_lines(self, node: ast.stmt) -> tuple[int, int] | None:
        """The span of the full lines a statement occupies, when nothing else shares them."""
        start, end = self.span(node)
        first = self.line_start(node.lineno)
        if self.source[first:start].strip():
            return None  # something before it on its line (`if x: return`)
        tail_end = self._starts[node.end_lineno] if node.end_lineno < len(self.lines) else len(self.source)  # type: ignore[operator]
        tail = self.source[end:tail_end]
        if tail.strip() and not tail.strip().startswith("#"):
            return None  # `a = 1; b = 2`
        return first, tail_end

    def indent_of(self, lineno: int) -> str:
        line = self.lines[lineno - 1]
        return line[: len(line) - len(line.lstrip())]


def apply_edits(source: str, edits: tuple[Edit, ...] | list[Edit]) -> str:
    """Apply non-overlapping edits; raises ValueError when two overlap."""
    out = source
    last = len(source) + 1
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        if edit.end > last:
            raise ValueError("overlapping edits")
        out = out[: edit.start] + edit.text + out[edit.end:]
        last = edit.start
    return out


def overlaps(a: tuple[Edit, ...], b: tuple[Edit, ...]) -> bool:
    return any(x.start < y.end and y.start < x.end for x in a for y in b)


@dataclass
class Function:
    """One function or method of a file, with what mutators need to find their sites."""

    path: str
    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    index: SourceIndex
    # Lines of the body (after the docstring): what tests must execute to be "covering".
    body_lines: tuple[int, int] = (0, 0)
    parents: dict[int, tuple[ast.AST, str]] = field(default_factory=dict)

    @property
    def lines(self) -> tuple[int, int]:
        first = min([self.node.lineno, *(d.lineno for d in self.node.decorator_list)])
        return first, self.node.end_lineno or self.node.lineno

    def nodes(self) -> Iterator[ast.AST]:
        """Nodes of this function's own body: nested functions and classes are their own units."""
        stack: list[ast.AST] = list(reversed(body_without_docstring(self.node)))
        while stack:
            node = stack.pop()
            yield node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            stack.extend(reversed(list(ast.iter_child_nodes(node))))

    def blocks(self) -> Iterator[list[ast.stmt]]:
        """Every statement list in the body (the body itself, if/else branches, loops, try parts)."""
        yield body_without_docstring(self.node)
        for node in self.nodes():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for name in ("body", "orelse", "finalbody"):
                block = getattr(node, name, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    yield block
            for handler in getattr(node, "handlers", []) or []:
                yield handler.body


def body_without_docstring(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def functions(path: str, source: str, tree: ast.Module | None = None) -> list[Function]:
    """Every function and method of a module, outer ones first, with dotted qualified names."""
    tree = tree or ast.parse(source)
    index = SourceIndex(source)
    found: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{child.name}"
                body = body_without_docstring(child)
                if body:
                    span = (body[0].lineno, child.end_lineno or body[0].lineno)
                    found.append(Function(path, qual, child, index, span))
                visit(child, qual + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif not isinstance(child, ast.expr):
                visit(child, prefix)

    visit(tree, "")
    return found


def in_range(fn: Function, start: int, end: int) -> bool:
    first, last = fn.lines
    return first <= end and start <= last
