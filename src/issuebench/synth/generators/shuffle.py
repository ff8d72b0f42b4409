"""Shuffle statements: two neighbouring statements of one block change places."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

from issuebench.synth.base import AstMutator
from issuebench.synth.source import Edit, Function


class ShuffleStatements(AstMutator):
    name = "shuffle"

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        for block in fn.blocks():
            for a, b in pairwise(block):
                sa, sb = fn.index.whole_lines(a), fn.index.whole_lines(b)
                if sa is None or sb is None or sa[1] != sb[0]:
                    continue  # comments or blank lines between: keep it simple
                ta, tb = fn.index.source[sa[0]:sa[1]], fn.index.source[sb[0]:sb[1]]
                if ta.strip() == tb.strip() or not ta.endswith("\n") or not tb.endswith("\n"):
                    continue
                yield [Edit(sa[0], sb[1], tb + ta)], f"swap statements at {a.lineno}"
