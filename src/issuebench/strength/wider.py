"""The wider-tests pass: after a run, look past the graded lists of every resolved prediction.

For each resolved prediction, the tests beyond FAIL_TO_PASS and PASS_TO_PASS that exercise the
changed code run twice, in the same workspace, environment and sandbox machinery as the eval
(harness.instance.run_tests): once under the gold patch, once under the candidate, both with the
task's test patch in place. A test that passes with gold and fails (or vanishes) with the candidate
is a test the candidate breaks. The official verdict is never changed; the result sits beside it
in `wider_tests.json` and in the run summary's `wider_tests` section.
"""

from __future__ import annotations

import shlex
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from issuebench import HARNESS_VERSION
from issuebench.code_digest import verdict_code
from issuebench.errors import IssuebenchError
from issuebench.harness import artifacts, commands
from issuebench.harness.instance import EvalContext, TestRun, resolve_task_spec, run_tests
from issuebench.harness.runlog import InstanceLog
from issuebench.models import (
    EnvSpec,
    InstanceReport,
    InstanceStatus,
    Prediction,
    Task,
    TestStatus,
    stable_hash,
)
from issuebench.repos.find import find_repo
from issuebench.strength.select import (
    MAX_MODULES,
    Scope,
    changed_code,
    graded_files,
    list_test_files,
    module_tests,
)

RESULT_FILE = "wider_tests.json"
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
        cmd = " ".join([spec.test_cmd, *(shlex.quote(t) for t in commands.test_targets(spec, fake_diff))])
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


def check_prediction(task: Task, prediction: Prediction, report: InstanceReport, ctx: EvalContext,
                     scope: Scope, gold_runs: GoldRuns | None = None, max_modules: int = MAX_MODULES) -> WiderResult:
    """The pass for one resolved prediction. Never raises for a fault of the task or the patch."""
    gold_runs = gold_runs or GoldRuns()
    inst_dir = ctx.layout.instance_dir(prediction.model_name_or_path, task.instance_id)
    inst_dir.mkdir(parents=True, exist_ok=True)
    base = WiderResult(task.instance_id, prediction.model_name_or_path, scope, "gold_failed")
    try:
        source = find_repo(task.repo, ctx.repos_dir, allow_clone=ctx.allow_clone)
        spec = resolve_task_spec(task, ctx.recipes_dir, source)
    except IssuebenchError as exc:
        base.reason = exc.message
        return base
    key = stable_hash({"eval": report.cache_key, "scope": scope, "harness": HARNESS_VERSION, "code": verdict_code(),
                       "patch": prediction.patch_hash(), "task": task.content_hash()})[:24]
    previous = read_result(inst_dir)
    if ctx.use_cache and previous is not None and previous.key == key:
        return previous
    base.key = key
    if scope == "covering":
        from issuebench.strength.covering import covering_check

        result = covering_check(task, prediction, ctx, spec, source, gold_runs, base)
    else:
        targets = select_targets(task, prediction, source, scope, max_modules)
        result = _pool_check(task, prediction, ctx, spec, targets, gold_runs, base, inst_dir)
    artifacts.write_json(inst_dir / RESULT_FILE, asdict(result))
    return result


def _pool_check(task: Task, prediction: Prediction, ctx: EvalContext, spec: EnvSpec, targets: list[str] | None,
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
        artifacts.write_text_atomic(inst_dir / "wider_gold_output.txt", gold.output)
        artifacts.write_text_atomic(inst_dir / "wider_candidate_output.txt", cand.output)
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


def read_result(inst_dir: Path) -> WiderResult | None:
    import json

    path = inst_dir / RESULT_FILE
    if not path.is_file():
        return None
    try:
        return WiderResult(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def wider_tests_pass(reports: list[InstanceReport], tasks: list[Task], predictions: list[Prediction],
                     ctx: EvalContext, scope: Scope, *, workers: int = 1, max_modules: int = MAX_MODULES,
                     on_result=None) -> list[WiderResult]:
    """Run the pass over every resolved report; one bad instance never stops the others."""
    by_task = {t.instance_id: t for t in tasks}
    by_pred = {(p.model_name_or_path, p.instance_id): p for p in predictions}
    jobs = [(by_task[r.instance_id], by_pred[(r.model_name_or_path, r.instance_id)], r) for r in reports
            if r.status is InstanceStatus.RESOLVED and r.instance_id in by_task
            and (r.model_name_or_path, r.instance_id) in by_pred]
    gold_runs = GoldRuns()

    def one(job) -> WiderResult:
        task, pred, rep = job
        try:
            res = check_prediction(task, pred, rep, ctx, scope, gold_runs, max_modules)
        except Exception as exc:  # the pass is an addition: it never takes the run down
            res = WiderResult(task.instance_id, pred.model_name_or_path, scope, "gold_failed",
                              reason=f"harness error: {type(exc).__name__}: {exc}")
        if on_result:
            on_result(res)
        return res

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, jobs))


def summary_section(results: list[WiderResult], resolved_ids: list[str], scope: str) -> dict:
    """The run summary's `wider_tests` block: the stricter count stands beside the official one."""
    breaking = sorted(r.instance_id for r in results if r.breaking)
    unchecked = sorted(r.instance_id for r in results if r.status not in ("checked", "skipped"))
    strict = sorted(set(resolved_ids) - set(breaking))
    return {
        "scope": scope,
        "checked_instances": sum(1 for r in results if r.status == "checked"),
        "skipped_ids": sorted(r.instance_id for r in results if r.status == "skipped"),
        "unchecked_ids": unchecked,
        "breaking_ids": breaking,
        "breaks": {r.instance_id: r.breaks for r in results if r.breaking},
        "flaky": {r.instance_id: r.flaky for r in results if r.flaky},
        "strict_resolved_instances": len(strict),
        "strict_resolved_ids": strict,
    }
