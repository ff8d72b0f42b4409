"""Remove code: a conditional, a loop, an assignment, a return, or a wrapper (`with`/`try`) around
its body. A statement goes with its whole lines; a block left empty gets `pass`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from issuebench.synth.base import AstMutator
from issuebench.synth.source import Edit, Function


def remove_statement(fn: Function, block: list[ast.stmt], stmt: ast.stmt) -> list[Edit] | None:
    span = fn.index.whole_lines(stmt)
    if span is None:
        return None
    text = "" if len(block) > 1 else fn.index.indent_of(stmt.lineno) + "pass\n"
    return [Edit(span[0], span[1], text)]


def _multiline_string_inside(node: ast.AST) -> bool:
    return any(isinstance(n, (ast.Constant, ast.JoinedStr)) and getattr(n, "end_lineno", 0) != getattr(n, "lineno", 0)
               for n in ast.walk(node))


def unwrap(fn: Function, stmt: ast.With | ast.AsyncWith | ast.Try) -> list[Edit] | None:
    """Replace a with/try statement by its body, dedented to the statement's own level."""
    span = fn.index.whole_lines(stmt)
    body = stmt.body
    if span is None or not body or any(fn.index.whole_lines(s) is None for s in body):
        return None
    if any(_multiline_string_inside(s) for s in body):
        return None  # dedenting would change the text of a string
    outer = fn.index.indent_of(stmt.lineno)
    inner = fn.index.indent_of(body[0].lineno)
    if not inner.startswith(outer) or len(inner) <= len(outer):
        return None
    first = fn.index.line_start(body[0].lineno)
    last_span = fn.index.whole_lines(body[-1])
    assert last_span is not None
    lines = fn.index.source[first:last_span[1]].splitlines(keepends=True)
    cut = len(inner) - len(outer)
    out = []
    for line in lines:
        if not line.strip():
            out.append(line)
        elif line[:cut].strip():
            return None  # a line less indented than the body (a bracket continuation): leave it
        else:
            out.append(line[cut:])
    return [Edit(span[0], span[1], "".join(out))]


class _RemoveKind(AstMutator):
    kinds: tuple[type, ...] = ()

    def accept(self, stmt: ast.stmt) -> bool:
        return True

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        for block in fn.blocks():
            for stmt in block:
                if isinstance(stmt, self.kinds) and self.accept(stmt):
                    edits = remove_statement(fn, block, stmt)
                    if edits:
                        yield edits, f"remove {type(stmt).__name__.lower()} at {stmt.lineno}"


class RemoveConditional(_RemoveKind):
    name = "remove_cond"
    kinds = (ast.If,)

    def accept(self, stmt: ast.stmt) -> bool:
        return not stmt.orelse  # type: ignore[attr-defined]


class RemoveLoop(_RemoveKind):
    name = "remove_loop"
    kinds = (ast.For, ast.AsyncFor, ast.While)


class RemoveAssignment(_RemoveKind):
    name = "remove_assign"
    kinds = (ast.Assign, ast.AugAssign, ast.AnnAssign)

    def accept(self, stmt: ast.stmt) -> bool:
        return getattr(stmt, "value", None) is not None


class RemoveReturn(_RemoveKind):
    name = "remove_return"
    kinds = (ast.Return,)

    def accept(self, stmt: ast.stmt) -> bool:
        return stmt.value is not None  # type: ignore[attr-defined]


class RemoveWrapper(AstMutator):
    name = "remove_wrapper"

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        for node in fn.nodes():
            if isinstance(node, (ast.With, ast.AsyncWith, ast.Try)):
                edits = unwrap(fn, node)
                if edits:
                    yield edits, f"unwrap {type(node).__name__.lower()} at {node.lineno}"
