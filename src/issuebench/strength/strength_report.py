"""`audit --test-strength`: run the measurement over a dataset and render it (text or JSON).

The distribution is over measured tasks: how many have every mutant killed, how many let some
survive, in fifths of strength. Tasks with survivors are listed with one surviving mutant each
(the line as the gold fix has it, and as mutated), so a person can judge whether it is really a
wrong fix; the JSON keeps every survivor's whole patch.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path

from issuebench.demo import DEMO_OWNER, demo_repos_dir
from issuebench.harness import EvalOptions, build_context
from issuebench.models import Task
from issuebench.strength.test_strength import TaskStrength, measure_tasks

BUCKETS = ("0-20%", "20-40%", "40-60%", "60-80%", "80-<100%", "100%")


def bucket(strength: float) -> str:
    if strength >= 1.0:
        return BUCKETS[-1]
    return BUCKETS[min(int(strength * 5), 4)]


def run_test_strength(tasks: list[Task], *, output_dir: Path, repos_dir: Path | None, no_sandbox: bool = False,
                      timeout: float = 1800.0, mutants: int = 10, workers: int = 1,
                      python_fallback: str = "error", on_result=None) -> list[TaskStrength]:

    if tasks and all(t.repo.partition("/")[0] == DEMO_OWNER for t in tasks):
        repos_dir = repos_dir or demo_repos_dir()
        python_fallback = "nearest"  # the demo's projects run on any Python 3.8+
    ctx = build_context(EvalOptions(output_dir=output_dir, run_id="test-strength", timeout=timeout,
                                    repos_dir=repos_dir, no_sandbox=no_sandbox,
                                    python_fallback=python_fallback))
    return measure_tasks(tasks, ctx, limit=mutants, workers=workers, on_result=on_result)


def distribution(results: list[TaskStrength]) -> dict:
    measured = [r for r in results if r.strength is not None]
    values = [r.strength for r in measured if r.strength is not None]
    counts = Counter(bucket(v) for v in values)
    return {
        "tasks": len(results),
        "measured": len(measured),
        "not_measured": dict(Counter(r.status for r in results if r.strength is None)),
        "with_survivors": sum(1 for r in measured if r.survivors),
        "mutants": sum(len(r.mutants) for r in measured),
        "killed": sum(r.killed for r in measured),
        "mean_strength": statistics.fmean(values) if values else None,
        "median_strength": statistics.median(values) if values else None,
        "buckets": {b: counts.get(b, 0) for b in BUCKETS},
    }


def strength_json(results: list[TaskStrength]) -> str:
    return json.dumps({"distribution": distribution(results), "tasks": [r.as_dict() for r in results]}, indent=2)


def strength_text(results: list[TaskStrength]) -> str:
    d = distribution(results)
    lines = [f"test strength: {d['measured']} of {d['tasks']} task(s) measured, {d['killed']}/{d['mutants']} "
             "mutants of the gold fix rejected by the task's own FAIL_TO_PASS + PASS_TO_PASS"]
    if d["measured"]:
        lines.append(f"  mean strength {100 * d['mean_strength']:.1f}%, median {100 * d['median_strength']:.1f}%; "
                     f"{d['with_survivors']} task(s) accept at least one mutant")
        lines.append("  distribution: " + ", ".join(f"{b} {n}" for b, n in d["buckets"].items()))
    if d["not_measured"]:
        lines.append("  not measured: " + ", ".join(f"{k} {v}" for k, v in sorted(d["not_measured"].items())))
    for r in results:
        if r.strength is None:
            lines.append(f"- {r.instance_id}: {r.status} ({r.reason})")
            continue
        lines.append(f"- {r.instance_id}: {r.killed}/{len(r.mutants)} killed ({100 * r.strength:.0f}%)"
                     + (f" of {r.candidates} offered" if r.candidates > len(r.mutants) else ""))
        if r.survivors:
            s = r.survivors[0]
            lines.append(f"    survives: {s.path} {s.description}")
            lines += [f"      {line}" for line in s.shown]
    return "\n".join(lines) + "\n"
