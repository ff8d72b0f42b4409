"""The pieces of a wider-tests check: the pool of other tests, the gold and candidate runs over
it, and the comparison (used by the module-level and the covering scopes alike)."""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from issuebench.files import write_text_atomic
from issuebench.harness import (
    EvalContext,
    InstanceLog,
    TestRun,
    run_tests,
    test_targets,
)
from issuebench.models import (
    EnvSpec,
    InstanceStatus,
    Prediction,
    Task,
    TestStatus,
    stable_hash,
)
from issuebench.strength.select import (
    MAX_MODULES,
    Scope,
    changed_code,
    graded_files,
    list_test_files,
    module_tests,
)

_PASS = {TestStatus.PASSED, TestStatus.XFAIL}
_NEUTRAL = _PASS | {TestStatus.SKIPPED}


@dataclass
class WiderResult:
    """What the pass found for one resolved prediction."""

    instance_id: str
    model: str
    scope: str
    # "checked": both runs parsed; "skipped": nothing beyond the graded lists to run;
    # "gold_failed" / "candidate_failed": a run did not produce results (reason says why).
    status: str
    reason: str = ""
    targets: list[str] = field(default_factory=list)
    compared: int = 0            # tests beyond the graded lists that passed with gold
    breaks: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # of breaks: absent from the candidate's log
    gold_failing: list[str] = field(default_factory=list)  # failing with gold too: not held against anyone
    flaky: list[str] = field(default_factory=list)  # broke once, not on the confirming rerun: not counted
    key: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def breaking(self) -> bool:
        return bool(self.breaks)


def pool_spec(spec: EnvSpec, targets: list[str] | None) -> EnvSpec:
    """The task's spec running `targets` (None: the whole suite) instead of the test patch's files.

    The targets go through the same directive rule as the test patch's files (paths, or Django's
    dotted labels); the environment hash does not involve the test command, so the built
    environment is reused."""
    if targets is None:
        cmd = spec.test_cmd
    else:
        fake_diff = "".join(f"diff --git a/{t} b/{t}\n" for t in targets)
        cmd = " ".join([spec.test_cmd, *(shlex.quote(t) for t in test_targets(spec, fake_diff))])
    return spec.model_copy(update={"test_cmd": cmd, "test_directives": "none"})


def compare_runs(gold: dict[str, TestStatus], cand: dict[str, TestStatus], graded: set[str]) -> WiderResult:
    """Tests beyond `graded` that pass with gold and do not with the candidate."""
    res = WiderResult(instance_id="", model="", scope="", status="checked")
    for test_id, status in sorted(gold.items()):
        if test_id in graded:
            continue
        if status not in _PASS:
            if status is not TestStatus.SKIPPED:
                res.gold_failing.append(test_id)
            continue
        res.compared += 1
        theirs = cand.get(test_id)
        if theirs is None:
            res.breaks.append(test_id)
            res.missing.append(test_id)
        elif theirs not in _NEUTRAL:
            res.breaks.append(test_id)
    return res


def select_targets(task: Task, prediction: Prediction, source: Path, scope: Scope,
                   max_modules: int = MAX_MODULES) -> list[str] | None:
    """The test files of the pool (None: the whole suite)."""
    if scope == "suite":
        return None
    code = sorted({*changed_code(task.patch).files, *changed_code(prediction.model_patch).files})
    targets = module_tests(code, list_test_files(source, task.base_commit), limit=max_modules)
    # A graded file holds tests beyond the lists too (the lists are what changed); keep it in.
    for f in graded_files(task.test_patch):
        if f.endswith(".py") and f not in targets:
            targets.append(f)
    return targets


class GoldRuns:
    """One gold run per (task, pool): every model's predictions for a task share it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, TestRun] = {}
        self._locks: dict[str, threading.Lock] = {}

    def get(self, key: str, make) -> TestRun:
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._runs:
                self._runs[key] = make()
            return self._runs[key]


def pool_check(task: Task, prediction: Prediction, ctx: EvalContext, spec: EnvSpec, targets: list[str] | None,
                gold_runs: GoldRuns, base: WiderResult, inst_dir: Path) -> WiderResult:
    if targets is not None and not targets:
        base.status, base.reason = "skipped", "no test modules found for the changed code"
        return base
    wspec = pool_spec(spec, targets)
    log = InstanceLog(inst_dir / "wider_tests.log")
    try:
        gold_key = stable_hash([task.content_hash(), wspec.content_hash()])
        log.info(f"gold run: {wspec.test_cmd}")
        gold = gold_runs.get(gold_key, lambda: run_tests(task, task.patch, ctx, spec=wspec, log=log))
        cand = run_tests(task, prediction.model_patch, ctx, spec=wspec, log=log)
        write_text_atomic(inst_dir / "wider_gold_output.txt", gold.output)
        write_text_atomic(inst_dir / "wider_candidate_output.txt", cand.output)
        return confirm(finish(base, gold, cand, task, targets), task, prediction, ctx, wspec, log)
    finally:
        log.close()


def confirm(result: WiderResult, task: Task, prediction: Prediction, ctx: EvalContext, wspec: EnvSpec,
            log: InstanceLog) -> WiderResult:
    """Both runs once more when something broke: a break counts only if it happens again (a test
    that fails once under load, or by test order, is flaky, not broken)."""
    if not result.breaks:
        return result
    log.info(f"confirming {len(result.breaks)} break(s) with a second pair of runs")
    gold = run_tests(task, task.patch, ctx, spec=wspec, log=log)
    cand = run_tests(task, prediction.model_patch, ctx, spec=wspec, log=log)
    if gold.status is not InstanceStatus.UNRESOLVED or cand.status is not InstanceStatus.UNRESOLVED:
        result.notes.append(f"the confirming runs did not both finish ({gold.status.value}, {cand.status.value}); "
                            "the breaks stand unconfirmed")
        return result
    again = set(compare_runs(gold.status_map, cand.status_map, {*task.FAIL_TO_PASS, *task.PASS_TO_PASS}).breaks)
    result.flaky = [t for t in result.breaks if t not in again]
    result.breaks = [t for t in result.breaks if t in again]
    result.missing = [t for t in result.missing if t in again]
    if not result.breaks:
        result.reason = f"{len(result.flaky)} test(s) broke once but not on the confirming rerun"
    else:
        result.reason = f"breaks {len(result.breaks)} other test(s)"
    return result


def finish(base: WiderResult, gold: TestRun, cand: TestRun, task: Task, targets: list[str] | None) -> WiderResult:
    """Turn the two runs into a result: both must have produced results to compare them."""
    base.targets = targets or []
    if gold.status is not InstanceStatus.UNRESOLVED:
        base.status, base.reason = "gold_failed", f"gold run {gold.status.value}: {gold.reason}"[:500]
        return base
    if cand.status is not InstanceStatus.UNRESOLVED:
        base.status = "candidate_failed"
        base.reason = f"candidate run {cand.status.value}: {cand.reason}"[:500]
        return base
    cmp = compare_runs(gold.status_map, cand.status_map, {*task.FAIL_TO_PASS, *task.PASS_TO_PASS})
    if not cmp.compared:
        base.status = "skipped"
        base.reason = ("no test beyond the graded lists passes with gold"
                       + (f" ({len(cmp.gold_failing)} fail with gold too)" if cmp.gold_failing else ""))
        base.gold_failing = cmp.gold_failing
        return base
    return replace(base, status="checked", compared=cmp.compared, breaks=cmp.breaks, missing=cmp.missing,
                   gold_failing=cmp.gold_failing,
                   reason=(f"breaks {len(cmp.breaks)} other test(s)" if cmp.breaks
                           else f"{cmp.compared} other test(s) pass as with gold"))
