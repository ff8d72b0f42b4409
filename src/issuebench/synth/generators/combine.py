"""Combinations: 2 or 3 kept single bugs of different functions of one file, applied together.

Runs after the single bugs are validated (phase "combined"), so every part is known to break a
test on its own and the combination is a harder, multi-location task.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from issuebench.synth.base import Candidate, Change, SynthContext
from issuebench.synth.source import apply_edits, overlaps


class Combine:
    name = "combine"
    phase = "combined"

    def candidates(self, ctx: SynthContext) -> Iterator[Candidate]:
        rng = random.Random(ctx.seed)
        per_file: dict[str, list[Candidate]] = {}
        for cand in ctx.kept:
            if cand.edits and len(cand.changes) == 1:
                per_file.setdefault(cand.changes[0].path, []).append(cand)
        budget = int(ctx.options.get("combine_per_file", 4))
        for path, singles in sorted(per_file.items()):
            if len({c.functions[0][1] for c in singles}) < 2:
                continue
            made: set[frozenset[str]] = set()
            for _ in range(budget * 5):
                if len(made) >= budget:
                    break
                size = rng.choice((2, 3))
                picks: list[Candidate] = []
                for cand in rng.sample(singles, len(singles)):
                    if len(picks) == size:
                        break
                    if any(cand.functions[0][1] == p.functions[0][1] for p in picks):
                        continue  # one bug per function
                    if any(overlaps(cand.edits, p.edits) for p in picks):
                        continue
                    picks.append(cand)
                key = frozenset(p.id for p in picks)
                if len(picks) < 2 or key in made:
                    continue
                made.add(key)
                before = picks[0].changes[0].before
                edits = tuple(e for p in picks for e in p.edits)
                try:
                    after = apply_edits(before, edits)
                except ValueError:
                    continue
                yield Candidate(self.name, [Change(path, before, after)], [f for p in picks for f in p.functions],
                                " + ".join(p.description for p in picks), parts=[p.id for p in picks], edits=edits)
