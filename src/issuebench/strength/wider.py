"""The wider-tests pass: after a run, look past the graded lists of every resolved prediction.

For each resolved prediction, the tests beyond FAIL_TO_PASS and PASS_TO_PASS that exercise the
changed code run twice, in the same workspace, environment and sandbox machinery as the eval
(harness.instance.run_tests): once under the gold patch, once under the candidate, both with the
task's test patch in place. A test that passes with gold and fails (or vanishes) with the candidate
is a test the candidate breaks. The official verdict is never changed; the result sits beside it
in `wider_tests.json` and in the run summary's `wider_tests` section.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path

from issuebench import HARNESS_VERSION
from issuebench.code_digest import verdict_code
from issuebench.errors import IssuebenchError
from issuebench.executors import Failure, LocalExecutor, drive
from issuebench.files import write_json
from issuebench.harness import (
    EvalContext,
    resolve_task_spec,
)
from issuebench.models import (
    InstanceReport,
    InstanceStatus,
    Prediction,
    Task,
    stable_hash,
)
from issuebench.repos import find_repo
from issuebench.strength.covering import covering_check
from issuebench.strength.select import (
    MAX_MODULES,
    Scope,
)
from issuebench.strength.wider_checks import GoldRuns, WiderResult, pool_check, select_targets

RESULT_FILE = "wider_tests.json"
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

        result = covering_check(task, prediction, ctx, spec, source, gold_runs, base)
    else:
        targets = select_targets(task, prediction, source, scope, max_modules)
        result = pool_check(task, prediction, ctx, spec, targets, gold_runs, base, inst_dir)
    write_json(inst_dir / RESULT_FILE, asdict(result))
    return result


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
    """Run the pass over every resolved report through the one fan-out path (executors.drive), in
    the reports' order; an instance whose check raised is `gold_failed` with the harness error."""
    by_task = {t.instance_id: t for t in tasks}
    by_pred = {(p.model_name_or_path, p.instance_id): p for p in predictions}
    jobs = [(by_task[r.instance_id], by_pred[(r.model_name_or_path, r.instance_id)], r) for r in reports
            if r.status is InstanceStatus.RESOLVED and r.instance_id in by_task
            and (r.model_name_or_path, r.instance_id) in by_pred]
    gold_runs = GoldRuns()
    results: list[WiderResult | None] = [None] * len(jobs)

    def handle(index: int, res: WiderResult | Failure) -> None:
        if isinstance(res, Failure):  # the pass is an addition: it never takes the run down
            task, pred, _ = jobs[index]
            res = WiderResult(task.instance_id, pred.model_name_or_path, scope, "gold_failed",
                              reason=f"harness error: {res.reason}")
        results[index] = res
        if on_result:
            on_result(res)

    work = partial(_check_job, ctx=ctx, scope=scope, gold_runs=gold_runs, max_modules=max_modules)
    drive(LocalExecutor(max(1, workers)), work, jobs, handle)
    return [r for r in results if r is not None]


def _check_job(job: tuple[Task, Prediction, InstanceReport], *, ctx: EvalContext, scope: Scope,
               gold_runs: GoldRuns, max_modules: int) -> WiderResult:
    task, pred, report = job
    return check_prediction(task, pred, report, ctx, scope, gold_runs, max_modules)


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
