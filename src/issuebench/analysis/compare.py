"""Two systems on the tasks they share: paired difference, bootstrap interval, exact McNemar test.

Pairing matters: both systems face the same tasks, so the per-task difference removes the task
difficulty that two separate intervals would count twice.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from issuebench.analysis.runs import RunResults
from issuebench.analysis.stats import mcnemar_exact, paired_bootstrap_diff, paired_sample_size


@dataclass
class Comparison:
    a: str
    b: str
    shared: int
    only_in_a: int
    only_in_b: int
    resolved_a: int
    resolved_b: int
    rate_a: float
    rate_b: float
    diff: float
    ci_low: float
    ci_high: float
    both: int
    neither: int
    a_only_ids: list[str] = field(default_factory=list)   # A resolved, B did not
    b_only_ids: list[str] = field(default_factory=list)   # B resolved, A did not
    mcnemar_p: float = 1.0
    tasks_needed: int | None = None
    n_boot: int = 10_000
    seed: int = 0

    @property
    def verdict(self) -> str:
        if self.shared == 0:
            return "no shared tasks: nothing to compare"
        if self.mcnemar_p < 0.05 and not (self.ci_low <= 0 <= self.ci_high):
            better = self.a if self.diff > 0 else self.b
            return f"{better} resolves more of the shared tasks (p = {self.mcnemar_p:.3g})"
        return f"cannot tell the two apart on these {self.shared} tasks (p = {self.mcnemar_p:.3g})"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict}


def compare_runs(a: RunResults, b: RunResults, *, n_boot: int = 10_000, seed: int = 0,
                 alpha: float = 0.05, power: float = 0.8) -> Comparison:
    shared = sorted(set(a.instances) & set(b.instances))
    ra = [int(a.instances[i].resolved) for i in shared]
    rb = [int(b.instances[i].resolved) for i in shared]
    a_only = [i for i, x, y in zip(shared, ra, rb, strict=True) if x and not y]
    b_only = [i for i, x, y in zip(shared, ra, rb, strict=True) if y and not x]
    n = len(shared)
    ci = paired_bootstrap_diff(ra, rb, n_boot=n_boot, seed=seed)
    return Comparison(
        a=a.name, b=b.name, shared=n,
        only_in_a=len(set(a.instances) - set(b.instances)), only_in_b=len(set(b.instances) - set(a.instances)),
        resolved_a=sum(ra), resolved_b=sum(rb),
        rate_a=sum(ra) / n if n else 0.0, rate_b=sum(rb) / n if n else 0.0,
        diff=(sum(ra) - sum(rb)) / n if n else 0.0, ci_low=ci.low, ci_high=ci.high,
        both=sum(1 for x, y in zip(ra, rb, strict=True) if x and y),
        neither=sum(1 for x, y in zip(ra, rb, strict=True) if not x and not y),
        a_only_ids=a_only, b_only_ids=b_only, mcnemar_p=mcnemar_exact(len(a_only), len(b_only)),
        tasks_needed=paired_sample_size(len(a_only) / n, len(b_only) / n, alpha=alpha, power=power) if n else None,
        n_boot=n_boot, seed=seed,
    )


def comparison_json(c: Comparison) -> str:
    return json.dumps(c.as_dict(), indent=2)


def comparison_text(c: Comparison) -> str:
    def pct(x: float) -> str:
        return f"{100 * x:+.1f}" if x else "0.0"

    lines = [
        f"A = {c.a}   B = {c.b}",
        f"shared tasks: {c.shared} (only in A: {c.only_in_a}, only in B: {c.only_in_b})",
        f"resolved: A {c.resolved_a}/{c.shared} ({100 * c.rate_a:.1f}%), B {c.resolved_b}/{c.shared} "
        f"({100 * c.rate_b:.1f}%)",
        f"A - B: {pct(c.diff)} points, 95% paired bootstrap interval {pct(c.ci_low)} to {pct(c.ci_high)} "
        f"({c.n_boot} resamples, seed {c.seed})",
        f"both resolved {c.both}, neither {c.neither}, only A {len(c.a_only_ids)}, only B {len(c.b_only_ids)}",
        f"exact McNemar test on the {len(c.a_only_ids) + len(c.b_only_ids)} discordant tasks: p = {c.mcnemar_p:.4g}",
        "tasks needed to tell them apart at this difference (alpha 0.05, power 0.8): "
        + (str(c.tasks_needed) if c.tasks_needed is not None else "never (no difference)"),
        f"verdict: {c.verdict}",
    ]
    if c.a_only_ids:
        lines.append("only A resolved: " + ", ".join(c.a_only_ids))
    if c.b_only_ids:
        lines.append("only B resolved: " + ", ".join(c.b_only_ids))
    return "\n".join(lines) + "\n"


def comparison_markdown(c: Comparison) -> str:
    body = comparison_text(c).strip().splitlines()
    return "# Paired comparison\n\n" + "\n".join(f"- {line}" for line in body) + "\n"
