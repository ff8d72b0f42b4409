"""What every generator produces (a Candidate) and the one interface generators share.

A generator turns a repository at a commit into candidate bugs. Procedural ones work per function
(`AstMutator.sites`), combinations and PR mirrors work over files or history, the model rewrite
asks a client. All of them yield Candidates; validation does not care which made one.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from issuebench.synth.source import Edit, Function, apply_edits


@dataclass
class Change:
    """A whole function's worth of evidence for one edited file."""

    path: str
    before: str
    after: str


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

    def wanted(self, fn: Function) -> bool:
        return self.covered is None or (fn.path, fn.qualname) in self.covered


class Generator(Protocol):
    name: str
    # "single" generators run first; "combined" ones read ctx.kept after singles are validated.
    phase: str

    def candidates(self, ctx: SynthContext) -> Iterator[Candidate]: ...


class AstMutator:
    """A procedural generator: every place in a function where one kind of change applies."""

    name = "ast"
    phase = "single"

    def sites(self, fn: Function) -> Iterator[tuple[list[Edit], str]]:
        """(edits, description) for each mutation of this kind in fn."""
        raise NotImplementedError

    def mutate_function(self, fn: Function) -> Iterator[Candidate]:
        source = fn.index.source
        where = [(fn.path, fn.qualname, *fn.body_lines)]
        for edits, description in self.sites(fn):
            try:
                after = apply_edits(source, edits)
            except ValueError:
                continue
            yield Candidate(self.name, [Change(fn.path, source, after)], where, description, edits=tuple(edits))

    def candidates(self, ctx: SynthContext) -> Iterator[Candidate]:
        from issuebench.synth.source import functions

        for path, source in sorted(ctx.files.items()):
            try:
                fns = functions(path, source)
            except SyntaxError:
                continue
            for fn in fns:
                if ctx.wanted(fn):
                    yield from self.mutate_function(fn)
