"""Calls: swap two positional arguments, drop a call statement, or keep a call's argument and drop
the call around it (`sorted(x)` → `x`)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from itertools import pairwise

from issuebench.synth.base import AstMutator
from issuebench.synth.generators.removal import remove_statement
from issuebench.synth.source import Edit, Function


class SwapArguments(AstMutator):
    name = "swap_args"

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        for node in fn.nodes():
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args):
                continue
            for a, b in pairwise(node.args):
                ta, tb = fn.index.text(a), fn.index.text(b)
                if ta == tb:
                    continue
                sa, sb = fn.index.span(a), fn.index.span(b)
                yield [Edit(sa[0], sa[1], tb), Edit(sb[0], sb[1], ta)], "swap arguments"
                break  # one swap per call: more would mostly be the same bug


class DropCall(AstMutator):
    name = "drop_call"

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        for block in fn.blocks():
            for stmt in block:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                    edits = remove_statement(fn, block, stmt)
                    if edits:
                        yield edits, "drop call statement"
        for node in fn.nodes():
            if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
                    and isinstance(node.func, ast.Name) \
                    and not isinstance(node.args[0], ast.Starred):
                if isinstance(node.func, ast.Name) and node.func.id in ("super", "len", "isinstance", "iter"):
                    continue  # a different type or a crash on every call: too obvious
                start, end = fn.index.span(node)
                yield [Edit(start, end, fn.index.text(node.args[0]))], "unwrap call"
