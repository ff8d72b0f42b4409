"""Per-system numbers for a set of runs: rate with interval, statuses, outcomes, repos, cost, agent steps.

The denominator of a rate is the whole task set: the dataset when one is given, else the run
summary's total, else the instances found. Missing, empty and errored instances count as
unresolved, as in the reference's resolved rate.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from issuebench.analysis import steps as agent_steps
from issuebench.analysis.costs import PredictionUsage, read_prediction_usage
from issuebench.analysis.outcomes import OUTCOME_ORDER
from issuebench.analysis.runs import RunResults, attach_usage, load_runs, restrict_to_dataset
from issuebench.analysis.stats import pareto_frontier, wilson
from issuebench.analysis.steps import InstanceRow, StepSummary
from issuebench.models import Task
from issuebench.strength import wider_counts

CONFIDENCE = 0.95


@dataclass
class RepoRate:
    resolved: int
    total: int

    @property
    def rate(self) -> float:
        return self.resolved / self.total if self.total else 0.0


@dataclass
class SystemSummary:
    name: str
    source: str
    total: int
    resolved: int
    rate: float
    ci_low: float
    ci_high: float
    status_counts: dict[str, int]
    outcome_counts: dict[str, int]
    per_repo: dict[str, RepoRate]
    cost_known: int = 0
    total_cost: float | None = None
    mean_cost_per_task: float | None = None
    cost_per_resolved: float | None = None
    pareto: bool | None = None
    steps: StepSummary | None = None     # None: no prediction of this system states its steps
    instances: list[InstanceRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # From an `eval --wider-tests` pass, when the run had one: resolved patches that break none of
    # the other tests of the changed code (the official count above stays as it is).
    strict_resolved: int | None = None
    strict_rate: float | None = None
    wider_scope: str | None = None
    wider_checked: int = 0
    breaking: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["per_repo"] = {k: {"resolved": v.resolved, "total": v.total, "rate": v.rate}
                         for k, v in self.per_repo.items()}
        return d


@dataclass
class Report:
    systems: list[SystemSummary]
    repos: list[str]
    confidence: float = CONFIDENCE
    method: str = ("rate = resolved / all tasks of the run (missing, empty and errored count as unresolved); "
                   "interval: Wilson score; cost per resolved = total known cost / resolved; "
                   "Pareto: not dominated on (mean cost per task, rate); "
                   "steps: the agent's model calls per instance, over the instances whose prediction states them")

    def as_dict(self) -> dict[str, Any]:
        return {"confidence": self.confidence, "method": self.method, "repos": self.repos,
                "systems": [s.as_dict() for s in self.systems]}


def summarize(run: RunResults) -> SystemSummary:
    results = list(run.instances.values())
    total = max(run.total or 0, len(results))
    resolved = sum(1 for r in results if r.resolved)
    ci = wilson(resolved, total, CONFIDENCE)
    status_counts = Counter(r.status for r in results)
    unseen = total - len(results)
    if unseen:
        status_counts["missing"] += unseen
    outcomes = Counter(r.outcome.value if r.outcome else "not graded" for r in results)
    outcome_counts = {o: outcomes.get(o, 0) for o in OUTCOME_ORDER}
    outcome_counts["not graded"] = outcomes.get("not graded", 0) + unseen
    repos: dict[str, RepoRate] = {}
    for r in results:
        rr = repos.setdefault(r.repo or "?", RepoRate(0, 0))
        rr.total += 1
        rr.resolved += int(r.resolved)
    costs = [r.cost for r in results if r.cost is not None]
    summary = SystemSummary(
        name=run.name, source=str(run.source), total=total, resolved=resolved,
        rate=resolved / total if total else 0.0, ci_low=ci.low, ci_high=ci.high,
        status_counts=dict(sorted(status_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        outcome_counts=outcome_counts, per_repo=dict(sorted(repos.items())), notes=list(run.notes))
    if costs:
        summary.cost_known = len(costs)
        summary.total_cost = sum(costs)
        summary.mean_cost_per_task = summary.total_cost / len(costs)
        summary.cost_per_resolved = summary.total_cost / resolved if resolved else None
        if len(costs) < len(results):
            summary.notes.append(f"cost known for {len(costs)} of {len(results)} instances; "
                                 "cost per resolved task undercounts")
    summary.instances = agent_steps.instance_rows(results)
    summary.steps = agent_steps.summarize_steps(summary.instances)
    if summary.steps is not None and summary.steps.known < len(results):
        summary.notes.append(f"steps known for {summary.steps.known} of {len(results)} instances; "
                             "the step figures are over those")
    _attach_wider(summary, run)
    return summary


def _attach_wider(summary: SystemSummary, run: RunResults) -> None:

    found = wider_counts(run.source, sorted(run.instances))
    if found is None:
        return
    resolved = run.resolved_ids
    summary.breaking = {i: b for i, b in found.breaking.items() if i in resolved}
    summary.strict_resolved = summary.resolved - len(summary.breaking)
    summary.strict_rate = summary.strict_resolved / summary.total if summary.total else 0.0
    summary.wider_scope, summary.wider_checked = found.scope, found.checked
    for iid, tests in sorted(summary.breaking.items()):
        summary.notes.append(f"{iid}: resolved, breaks {len(tests)} other test(s): " + ", ".join(tests[:5])
                             + (" ..." if len(tests) > 5 else ""))


WIDER_HEADER = ["system", "resolved", "rate", "without breaking wider tests", "stricter rate", "checked", "scope"]


def wider_rows(report: Report) -> list[list[str]]:
    """The stricter rate beside the official one, for systems whose run had a wider-tests pass."""
    return [[s.name, f"{s.resolved}/{s.total}", _pct(s.rate), f"{s.strict_resolved}/{s.total}",
             _pct(s.strict_rate or 0.0), str(s.wider_checked), s.wider_scope or ""]
            for s in report.systems if s.strict_resolved is not None]



def mark_pareto(systems: Sequence[SystemSummary]) -> None:
    priced = [s for s in systems if s.mean_cost_per_task is not None]
    flags = pareto_frontier([(s.mean_cost_per_task or 0.0, s.rate) for s in priced])
    for s, flag in zip(priced, flags, strict=True):
        s.pareto = flag


def build_report(runs: Sequence[RunResults], *, tasks: Sequence[Task] | None = None,
                 prediction_files: Sequence[Path | str] = ()) -> Report:
    if tasks is not None:
        for run in runs:
            restrict_to_dataset(run, tasks)
    if prediction_files:
        by_model: dict[str, dict[str, PredictionUsage]] = {}
        for path in prediction_files:
            for model, usage in read_prediction_usage(path).items():
                by_model.setdefault(model, {}).update(usage)
        for run in runs:
            usage = by_model.get(run.model or run.name) or by_model.get(run.name.split("@")[0])
            if usage is None and len(by_model) == 1 and len(runs) == 1:
                usage = next(iter(by_model.values()))
            if usage:
                attach_usage(run, usage)
    systems = [summarize(r) for r in runs]
    systems.sort(key=lambda s: (-s.rate, s.mean_cost_per_task if s.mean_cost_per_task is not None else 1e18,
                                s.name))
    mark_pareto(systems)
    repos = sorted({repo for s in systems for repo in s.per_repo})
    return Report(systems=systems, repos=repos)


def report_from_paths(paths: Sequence[Path | str], *, tasks: Sequence[Task] | None = None,
                      prediction_files: Sequence[Path | str] = ()) -> Report:
    return build_report(load_runs(paths), tasks=tasks, prediction_files=prediction_files)


# ---------------------------------------------------------------- rendering

def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _money(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def _pareto(flag: bool | None) -> str:
    return {True: "yes", False: "no", None: "n/a"}[flag]


def headline_rows(report: Report) -> list[list[str]]:
    rows = []
    for s in report.systems:
        rows.append([s.name, f"{s.resolved}/{s.total}", _pct(s.rate),
                     f"{_pct(s.ci_low)} to {_pct(s.ci_high)}", _money(s.mean_cost_per_task),
                     _money(s.cost_per_resolved), _pareto(s.pareto), agent_steps.mean_steps_cell(s)])
    return rows


HEADLINE = ["system", "resolved", "rate", "95% CI (Wilson)", "cost/task", "cost/resolved", "Pareto", "steps/task"]


def to_json(report: Report) -> str:
    return json.dumps(report.as_dict(), indent=2, sort_keys=False)


def to_markdown(report: Report) -> str:
    out = ["# Evaluation report", "", f"Method: {report.method}.", ""]
    out += ["| " + " | ".join(HEADLINE) + " |", "|" + "---|" * len(HEADLINE)]
    out += ["| " + " | ".join(r) + " |" for r in headline_rows(report)]
    out += ["", "## Statuses", ""]
    for s in report.systems:
        out.append(f"- **{s.name}**: " + ", ".join(f"{k} {v}" for k, v in s.status_counts.items()))
    cats = [*OUTCOME_ORDER, "not graded"]
    out += ["", "## Outcome categories (SWE-bench paper, Appendix C.5)", "",
            "| system | " + " | ".join(cats) + " |", "|---|" + "---|" * len(cats)]
    for s in report.systems:
        out.append(f"| {s.name} | " + " | ".join(str(s.outcome_counts.get(c, 0)) for c in cats) + " |")
    out += ["", "## Per repository (resolved/total)", "",
            "| repository | " + " | ".join(s.name for s in report.systems) + " |",
            "|---|" + "---|" * len(report.systems)]
    for repo in report.repos:
        cells = []
        for s in report.systems:
            rr = s.per_repo.get(repo)
            cells.append(f"{rr.resolved}/{rr.total} ({_pct(rr.rate)})" if rr else "-")
        out.append(f"| {repo} | " + " | ".join(cells) + " |")
    if wider_rows(report):
        out += ["", "## Resolved without breaking wider tests (eval --wider-tests)", "",
                "| " + " | ".join(WIDER_HEADER) + " |", "|" + "---|" * len(WIDER_HEADER)]
        out += ["| " + " | ".join(r) + " |" for r in wider_rows(report)]
    out += agent_steps.markdown_lines(report.systems)
    notes = [(s.name, n) for s in report.systems for n in s.notes]
    if notes:
        out += ["", "## Notes", ""] + [f"- {name}: {n}" for name, n in notes]
    return "\n".join(out) + "\n"


def to_csv(report: Report) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    cats = [*OUTCOME_ORDER, "not graded"]
    statuses = sorted({k for s in report.systems for k in s.status_counts})
    writer.writerow(["system", "resolved", "total", "rate", "ci_low", "ci_high", "mean_cost_per_task",
                     "cost_per_resolved", "pareto", *agent_steps.STEPS_CSV,
                     *[f"status:{k}" for k in statuses], *[f"outcome:{c}" for c in cats],
                     *[f"repo:{r}" for r in report.repos]])
    for s in report.systems:
        writer.writerow([
            s.name, s.resolved, s.total, f"{s.rate:.6f}", f"{s.ci_low:.6f}", f"{s.ci_high:.6f}",
            "" if s.mean_cost_per_task is None else f"{s.mean_cost_per_task:.6f}",
            "" if s.cost_per_resolved is None else f"{s.cost_per_resolved:.6f}",
            _pareto(s.pareto), *agent_steps.steps_csv_cells(s),
            *[s.status_counts.get(k, 0) for k in statuses], *[s.outcome_counts.get(c, 0) for c in cats],
            *[(f"{s.per_repo[r].resolved}/{s.per_repo[r].total}" if r in s.per_repo else "") for r in report.repos],
        ])
    return buf.getvalue()


def to_rich_tables(report: Report) -> list[Any]:
    from rich.table import Table

    head = Table(title="Resolved rate (95% Wilson interval), cost and agent steps")
    for col in HEADLINE:
        head.add_column(col, justify="left" if col == "system" else "right")
    for row in headline_rows(report):
        head.add_row(*row)
    cats = [*OUTCOME_ORDER, "not graded"]
    outc = Table(title="Outcome categories (applied patches)")
    outc.add_column("system")
    for c in cats:
        outc.add_column(c, justify="right")
    for s in report.systems:
        outc.add_row(s.name, *[str(s.outcome_counts.get(c, 0)) for c in cats])
    stat = Table(title="Statuses")
    stat.add_column("system")
    stat.add_column("counts")
    for s in report.systems:
        stat.add_row(s.name, ", ".join(f"{k} {v}" for k, v in s.status_counts.items()))
    repo = Table(title="Per repository: resolved/total")
    repo.add_column("repository")
    for s in report.systems:
        repo.add_column(s.name, justify="right")
    for r in report.repos:
        repo.add_row(r, *[(f"{s.per_repo[r].resolved}/{s.per_repo[r].total}" if r in s.per_repo else "-")
                          for s in report.systems])
    tables = [head, stat, outc, repo]
    if agent_steps.steps_rows(report.systems):
        steps = Table(title="Agent steps (per instance: --format md, json or html)",
                      caption=agent_steps.STEPS_LEGEND)
        for col in agent_steps.STEPS_HEADER:
            steps.add_column(col, justify="right" if col in ("with steps", "mean", "median") else "left")
        for row in agent_steps.steps_rows(report.systems):
            steps.add_row(*row)
        tables.append(steps)
    if wider_rows(report):
        wide = Table(title="Resolved without breaking wider tests (the official rate stays)")
        for col in WIDER_HEADER:
            wide.add_column(col, justify="left" if col in ("system", "scope") else "right")
        for row in wider_rows(report):
            wide.add_row(*row)
        tables.append(wide)
    return tables
