"""synth's procedural generators behind the strength Mutator protocol.

synth mutates whole functions that overlap a line range (`mutate_range`); test strength wants
mutants of the lines the gold patch changed, so only candidates whose edits touch those lines
are kept. It is the mutator test strength uses (`default_mutator`).
"""

from __future__ import annotations

from collections.abc import Iterator

from issuebench.strength.mutants import Mutant
from issuebench.synth import mutate_range


class SynthMutator:
    """Every procedural synth generator, on the changed lines only."""

    def __init__(self, names: list[str] | None = None) -> None:
        self.names = names

    def mutants(self, path: str, text: str, lines: set[int]) -> Iterator[Mutant]:
        if not lines:
            return
        seen: set[str] = set()
        try:
            candidates = mutate_range(path, text, min(lines), max(lines), self.names)
        except SyntaxError:
            return
        for cand in candidates:
            if len(cand.changes) != 1 or not cand.edits:
                continue
            touched = {text.count("\n", 0, e.start) + 1 for e in cand.edits}
            after = cand.changes[0].after
            if not touched & lines or after in seen:
                continue
            seen.add(after)
            line = min(touched & lines)
            yield Mutant(path, line, f"line {line}: {cand.generator}: {cand.description}", after)


def default_mutator() -> SynthMutator:
    """The mutator test strength uses: synth's generators."""
    return SynthMutator()
