"""What every generator produces (a Candidate) and the one interface generators share.

A generator turns a repository at a commit into candidate bugs. Procedural ones work per function
(`AstMutator.sites`), combinations and PR mirrors work over files or history, the model rewrite
asks a client. All of them yield Candidates; validation does not care which made one.
"""

from __future__ import annotations

import ast
import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

from issuebench.synth.source import Edit, Function, apply_edits, functions


class Change:
    """One edited file: its text before, and after (given, or made from text edits on demand).

    Procedural generators propose thousands of bugs per repository; keeping only the edits until
    a candidate is considered keeps a run's memory at one copy of each file.
    """

    def __init__(self, path: str, before: str, after: str | None = None, edits: tuple[Edit, ...] = ()) -> None:
        self.path, self.before, self._after, self.edits = path, before, after, edits

    @property
    def after(self) -> str:
        return self._after if self._after is not None else apply_edits(self.before, self.edits)


@dataclass
class Candidate:
    generator: str
    changes: list[Change]
    # (path, qualname, first body line, last line) of each function the bug lives in: the lines
    # whose covering tests validate it (the def line runs at import, under every test).
    functions: list[tuple[str, str, int, int]]
    description: str = ""  # for the yield log only; never shown in an issue
    parts: list[str] = field(default_factory=list)  # ids of single bugs a combination is made of
    edits: tuple[Edit, ...] = ()  # the text edits of a one-file procedural bug (combinations reuse them)

    @property
    def id(self) -> str:
        """Content id: the same broken tree from two generators is one candidate."""
        digest = hashlib.sha256()
        for change in sorted(self.changes, key=lambda c: c.path):
            digest.update(change.path.encode() + b"\0" + change.after.encode() + b"\0")
        return digest.hexdigest()[:12]

    def problem(self) -> str | None:
        """'syntax' when a changed file no longer parses, 'equivalent' when its AST is unchanged."""
        for change in self.changes:
            if not change.path.endswith(".py"):
                continue
            try:
                after = ast.dump(ast.parse(change.after))
            except SyntaxError:
                return "syntax"
            if after != ast.dump(ast.parse(change.before)):
                return None
        return "equivalent"


@dataclass
class SynthContext:
    """What generators may look at: the checkout, its Python files, and optional helpers."""

    root: Path                     # a checkout of the commit (read only for generators)
    commit: str
    files: dict[str, str]          # relative path -> source, non-test Python files
    covered: set[tuple[str, str]] | None = None  # (path, qualname) some test executes; None: all
    kept: list[Candidate] = field(default_factory=list)  # single bugs already kept (for combinations)
    git_dir: Path | None = None    # the source repository, for history-based generators
    client: Any | None = None      # an object with query(messages), for model generators
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)

    _functions: dict[str, list[Function]] = field(default_factory=dict, repr=False)

    def functions(self, path: str) -> list[Function]:
        """The functions of one file, parsed once for every generator."""
        if path not in self._functions:

            try:
                self._functions[path] = functions(path, self.files[path])
            except SyntaxError:
                self._functions[path] = []
        return self._functions[path]

    def wanted(self, fn: Function) -> bool:
        return self.covered is None or (fn.path, fn.qualname) in self.covered


class Generator(Protocol):
    name: str
    # "single" generators run first; "combined" ones read ctx.kept after singles are validated.
    phase: str

    def candidates(self, ctx: SynthContext) -> Iterator[Candidate]: ...


class AstMutator(ABC):
    """A procedural generator: every place in a function where one kind of change applies.
    Each kind of mutation is a subclass that says where it applies (`sites`)."""

    name = "ast"
    phase = "single"

    @abstractmethod
    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        """(edits, description) for each mutation of this kind in fn."""

    def mutate_function(self, fn: Function) -> Iterator[Candidate]:
        source = fn.index.source
        where = [(fn.path, fn.qualname, *fn.body_lines)]
        for edits, description in self.sites(fn):
            spans = sorted((e.start, e.end) for e in edits)
            if any(a[1] > b[0] for a, b in pairwise(spans)):
                continue  # overlapping edits: not one bug
            yield Candidate(self.name, [Change(fn.path, source, edits=tuple(edits))], where, description,
                            edits=tuple(edits))

    def candidates(self, ctx: SynthContext) -> Iterator[Candidate]:
        for path in sorted(ctx.files):
            for fn in ctx.functions(path):
                if ctx.wanted(fn):
                    yield from self.mutate_function(fn)
