"""An agent's steps in a report: per instance, per system (all, resolved, not resolved), step-limit hits.

Steps come from the predictions (analysis/costs.py reads them with the cost). An instance whose
prediction states none (gold, a reference run, a tool that does not count) has no steps: it is left
out of every figure and shown blank, never as 0. The rows for each format are built here so that
markdown, CSV, the terminal and the HTML page say the same thing.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from issuebench.analysis.costs import STEP_LIMIT

if TYPE_CHECKING:
    from issuebench.analysis.report import SystemSummary
    from issuebench.analysis.runs import InstanceResult


@dataclass
class StepStats:
    n: int
    total: int
    mean: float
    median: float

    @classmethod
    def of(cls, values: Sequence[int]) -> StepStats | None:
        if not values:
            return None
        return cls(n=len(values), total=sum(values), mean=statistics.fmean(values),
                   median=float(statistics.median(values)))


@dataclass
class StepSummary:
    known: int                            # instances whose prediction states its steps
    all: StepStats
    resolved: StepStats | None
    unresolved: StepStats | None          # everything not resolved: unresolved, empty, errored, ...
    step_limit: list[str] = field(default_factory=list)      # ids whose agent stopped on its step limit
    agent_exits: dict[str, int] = field(default_factory=dict)  # how the agent's runs ended, counted


@dataclass
class InstanceRow:
    """One instance as the report shows it: verdict beside what making the prediction took."""

    instance_id: str
    status: str
    resolved: bool
    cost: float | None
    steps: int | None
    agent_exit: str | None


def instance_rows(results: Iterable[InstanceResult]) -> list[InstanceRow]:
    return [InstanceRow(r.instance_id, r.status, r.resolved, r.cost, r.steps, r.agent_exit)
            for r in sorted(results, key=lambda r: r.instance_id)]


def summarize_steps(rows: Sequence[InstanceRow]) -> StepSummary | None:
    """None when no instance states its steps: the report then shows no step figures at all."""
    known = [r for r in rows if r.steps is not None]
    overall = StepStats.of([r.steps for r in known if r.steps is not None])
    if overall is None:
        return None
    exits = Counter(r.agent_exit for r in rows if r.agent_exit)
    return StepSummary(
        known=len(known), all=overall,
        resolved=StepStats.of([r.steps for r in known if r.resolved and r.steps is not None]),
        unresolved=StepStats.of([r.steps for r in known if not r.resolved and r.steps is not None]),
        step_limit=[r.instance_id for r in rows if r.agent_exit == STEP_LIMIT],
        agent_exits=dict(sorted(exits.items(), key=lambda kv: (-kv[1], kv[0]))))


# ---------------------------------------------------------------- rows for each format

def _num(x: float) -> str:
    return f"{x:.0f}" if x == int(x) else f"{x:.1f}"


def _mean_median(s: StepStats | None) -> str:
    return "" if s is None else f"{s.mean:.1f} ({_num(s.median)})"


def mean_steps_cell(system: SystemSummary) -> str:
    """The headline's cell: mean steps per instance with steps, blank without any."""
    return "" if system.steps is None else f"{system.steps.all.mean:.1f}"


def _limit_cell(s: StepSummary, limit: int = 5) -> str:
    if not s.step_limit:
        return "0"
    ids = ", ".join(s.step_limit[:limit]) + (", ..." if len(s.step_limit) > limit else "")
    return f"{len(s.step_limit)}: {ids}"


# "resolved" and "not resolved" hold the mean steps of those instances, the median in brackets.
STEPS_HEADER = ["system", "with steps", "mean", "median", "resolved", "not resolved", "at the step limit",
                "agent endings"]
STEPS_LEGEND = ("model calls per instance, from the predictions; resolved / not resolved: mean (median) of "
                "those instances; instances whose prediction states none are left out and shown blank")


def steps_rows(systems: Sequence[SystemSummary]) -> list[list[str]]:
    """One row per system whose predictions state steps."""
    rows = []
    for system in systems:
        s = system.steps
        if s is None:
            continue
        rows.append([system.name, f"{s.known}/{len(system.instances)}", f"{s.all.mean:.1f}", _num(s.all.median),
                     _mean_median(s.resolved), _mean_median(s.unresolved), _limit_cell(s),
                     ", ".join(f"{k} {v}" for k, v in s.agent_exits.items())])
    return rows


INSTANCE_HEADER = ["system", "instance", "status", "cost", "steps", "agent ending"]


def per_instance_rows(systems: Sequence[SystemSummary]) -> list[list[str]]:
    """Every instance of the systems that state steps; a blank cell is a figure the prediction lacks."""
    return [[system.name, r.instance_id, r.status, "" if r.cost is None else f"{r.cost:.4f}",
             "" if r.steps is None else str(r.steps), r.agent_exit or ""]
            for system in systems if system.steps is not None for r in system.instances]


STEPS_CSV = ["steps_known", "mean_steps", "median_steps", "mean_steps_resolved", "mean_steps_unresolved",
             "step_limit_hits", "step_limit_ids"]


def steps_csv_cells(system: SystemSummary) -> list[str]:
    s = system.steps
    if s is None:
        return ["", "", "", "", "", "", ""]
    return [str(s.known), f"{s.all.mean:.6f}", _num(s.all.median),
            "" if s.resolved is None else f"{s.resolved.mean:.6f}",
            "" if s.unresolved is None else f"{s.unresolved.mean:.6f}",
            str(len(s.step_limit)), " ".join(s.step_limit)]


def markdown_lines(systems: Sequence[SystemSummary]) -> list[str]:
    rows = steps_rows(systems)
    if not rows:
        return []
    out = ["", "## Agent steps", "", STEPS_LEGEND[0].upper() + STEPS_LEGEND[1:] + ".", "",
           "| " + " | ".join(STEPS_HEADER) + " |", "|" + "---|" * len(STEPS_HEADER)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    out += ["", "### Per instance", "",
            "| " + " | ".join(INSTANCE_HEADER) + " |", "|" + "---|" * len(INSTANCE_HEADER)]
    out += ["| " + " | ".join(r) + " |" for r in per_instance_rows(systems)]
    return out
