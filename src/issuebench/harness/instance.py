"""One prediction graded end to end, in phases, each a function of its own:

1. `evaluate_instance`: a hidden staging folder that takes the place of the instance's folder only
   when the instance finishes (harness.staging), so an interrupted one leaves its folder as it was.
2. `_not_to_run`: a patch that is empty or not a diff, a repository or recipe that cannot be had:
   a status at once, nothing run.
3. `_reused`: the same verdict from this run folder or the shared result cache, when nothing that
   can change it changed (`cache_key`).
4. `_run_and_record`: the tests (harness.running), the setup fallback when they cannot run, a
   rerun when only PASS_TO_PASS tests failed (harness.flaky), and the run's artifacts.
5. `verdict.graded`: the grade, and what withholds it.

Every failure becomes a status with a reason; nothing raised here stops the rest of a run.
"""

from __future__ import annotations

import time
from pathlib import Path

from issuebench import HARNESS_VERSION
from issuebench.code_digest import verdict_code
from issuebench.errors import IssuebenchError
from issuebench.files import write_json, write_text_atomic
from issuebench.harness import artifacts, flaky, guards, staging, tests_fallback, verdict
from issuebench.harness.cache import restore, store
from issuebench.harness.context import EvalContext
from issuebench.harness.recipe_fallback import other_recipe
from issuebench.harness.runlog import InstanceLog
from issuebench.harness.runner_report import ARTIFACT as RUNNER_REPORT_ARTIFACT
from issuebench.harness.running import resolve_task_spec, run_tests, spec_for_run  # noqa: F401 (the face reads it here)
from issuebench.harness.task_version import log_version_notes
from issuebench.harness.test_run import TestRun, explain
from issuebench.models import (
    EnvSpec,
    InstanceReport,
    InstanceStatus,
    PatchStatus,
    Prediction,
    Task,
    stable_hash,
)
from issuebench.patch import check_patch
from issuebench.repos import find_repo

# Faults of the machine rather than of the patch are retried on the next run, never cached.
_NOT_CACHED = {InstanceStatus.ERROR, InstanceStatus.SANDBOX_FAILED, InstanceStatus.ENV_FAILED}


def cache_key(task: Task, prediction: Prediction, spec: EnvSpec, ctx: EvalContext) -> str:
    """Everything that can change a verdict: the task, the patch, the spec, the harness, the limits."""
    limits = ctx.limits
    return stable_hash({
        "task": task.content_hash(),
        "patch": prediction.patch_hash(),
        "spec": spec.content_hash(),
        "env": spec.env_hash(),   # carries the env build rules, which the spec's content does not
        "harness": HARNESS_VERSION,
        "code": verdict_code(),   # the code that reads, runs and grades: a changed parser re-grades
        "strict": ctx.strict,
        **({"flaky_reruns": ctx.flaky_reruns} if ctx.flaky_reruns != 1 else {}),  # the default: keys stay
        "sandbox": getattr(ctx.sandbox, "name", "?"),
        "backend": ctx.backend,
        "timeout": getattr(limits, "timeout", None),
        # A stand-in interpreter (--python-fallback nearest) is a different experiment.
        "python_fallback": getattr(ctx.env_builder, "python_fallback", None),
        **({"setup_fallback": True} if ctx.setup_fallback else {}),  # only when on: other keys stay
    })[:24]


def evaluate_instance(task: Task, prediction: Prediction, ctx: EvalContext) -> InstanceReport:
    """Grade one prediction; returns the report (its folder written when it finishes)."""
    final = ctx.layout.instance_dir(prediction.model_name_or_path, task.instance_id)
    work = staging.open_staging(final)
    log = InstanceLog(work / staging.LOG_FILE)
    try:
        return _evaluate(task, prediction, ctx, work, final, log)
    finally:
        log.close()
        staging.drop_staging(final)  # nothing left once published; an unfinished one's files go


def _evaluate(task: Task, prediction: Prediction, ctx: EvalContext, work: Path, final: Path,
              log: InstanceLog) -> InstanceReport:
    base = InstanceReport(instance_id=task.instance_id, model_name_or_path=prediction.model_name_or_path,
                          status=InstanceStatus.ERROR, repo=task.repo, cost=prediction.cost,
                          patch_is_None=prediction.model_patch is None,
                          patch_exists=bool(prediction.model_patch and prediction.model_patch.strip()))
    write_text_atomic(work / "patch.diff", prediction.model_patch or "")
    spec = _not_to_run(task, prediction, ctx, base)
    if isinstance(spec, InstanceReport):
        return _finish(work, final, log, spec)
    key = cache_key(task, prediction, spec, ctx)
    reused = _reused(key, prediction, ctx, work, final, log) if ctx.use_cache else None
    if reused is not None:
        return reused
    report = _run_and_record(task, prediction, ctx, spec, base.model_copy(update={"cache_key": key}), work, log)
    report = _finish(work, final, log, report)
    if ctx.use_cache and report.cache_key and report.status not in _NOT_CACHED and final.is_dir():
        store(report.cache_key, final)
    return report


def _not_to_run(task: Task, prediction: Prediction, ctx: EvalContext, base: InstanceReport) -> EnvSpec | InstanceReport:
    """The task's recipe, or the report of a prediction that is not run at all."""
    early = check_patch(prediction.model_patch or "")
    if early is PatchStatus.EMPTY:
        return base.model_copy(update={"status": InstanceStatus.EMPTY, "reason": "empty patch: not run",
                                       "patch_status": early})
    if early is PatchStatus.INVALID:
        return base.model_copy(update={"status": InstanceStatus.INVALID_PATCH,
                                       "reason": "the patch is not a unified diff", "patch_status": early})
    source = None
    try:
        if ctx.backend != "docker":  # with docker, the repository is inside the image
            source = find_repo(task.repo, ctx.repos_dir, allow_clone=ctx.allow_clone)
    except IssuebenchError as exc:
        return base.model_copy(update={"status": InstanceStatus.ERROR, "reason": f"no repository: {explain(exc)}"})
    try:
        return resolve_task_spec(task, ctx.recipes_dir, source)
    except IssuebenchError as exc:
        why = f"no environment recipe: {explain(exc)}"
        spec = other_recipe(task, ctx, source, why)
        return spec if spec is not None else base.model_copy(update={"status": InstanceStatus.ENV_FAILED,
                                                                       "reason": why})


def _reused(key: str, prediction: Prediction, ctx: EvalContext, work: Path, final: Path,
            log: InstanceLog) -> InstanceReport | None:
    cached = artifacts.read_instance_result(final)
    # The run folder's own result follows the shared cache's rule: a fault of the machine is retried.
    if cached is not None and cached.cache_key == key and cached.status not in _NOT_CACHED:
        InstanceLog.append(final / staging.LOG_FILE, "result reused (same task, patch, spec and harness)")
        return cached
    if not restore(key, work):
        return None
    restored = artifacts.read_instance_result(work)
    if restored is None:
        return None
    # The same patch may come from another system: the verdict carries over, the name not.
    restored = restored.model_copy(update={"model_name_or_path": prediction.model_name_or_path,
                                           "cost": prediction.cost})
    log.info(f"result restored from the cache (key {key})")
    return _finish(work, final, log, restored)


def _run_and_record(task: Task, prediction: Prediction, ctx: EvalContext, spec: EnvSpec, base: InstanceReport,
                    work: Path, log: InstanceLog) -> InstanceReport:
    log.info(f"evaluating {task.instance_id} for {prediction.model_name_or_path} (cache key {base.cache_key})")
    version_notes = log_version_notes(spec, log)
    start = time.monotonic()
    base = base.model_copy(update={"notes": version_notes})
    first = _graded_run(task, prediction, ctx, spec, base, log)
    (run, report), others = flaky.with_reruns(
        first, lambda: _graded_run(task, prediction, ctx, spec, base, log), ctx.flaky_reruns, log)
    for number, other in others.items():   # the graded run's log is test_output.txt, as ever
        write_text_atomic(work / f"test_output.run{number}.txt", other.output)
    _write_run(work, run)
    tests = sum(r.durations.get("tests", 0.0) for r in (run, *others.values()))
    return report.model_copy(update={"durations": {**report.durations, "tests": tests,
                                                   "total": time.monotonic() - start}})


def _graded_run(task: Task, prediction: Prediction, ctx: EvalContext, spec: EnvSpec, base: InstanceReport,
                log: InstanceLog) -> tuple[TestRun, InstanceReport]:
    """One run of the tests with the patch, and its report (graded when the tests ran and were parsed)."""
    run = run_tests(task, prediction.model_patch, ctx, spec=spec, log=log)
    run = tests_fallback.when_tests_cannot_run(task, prediction.model_patch, ctx, run, run_tests, spec, log)
    report = base.model_copy(update={
        "status": run.status, "reason": run.reason, "patch_status": run.patch_status,
        "apply_method": run.apply_method, "env_hash": run.env_hash, "python": run.python,
        "exclude_newer": run.exclude_newer, "notes": [*base.notes, *run.notes],
        "returncode": run.returncode,
        "patch_successfully_applied": run.patch_status in (PatchStatus.APPLIED, PatchStatus.APPLIED_AFTER_REPAIR),
        "durations": dict(run.durations),
    })
    suspicious = guards.suspicious_lines(prediction.model_patch or "")
    if suspicious:
        report = report.model_copy(update={"notes": [*report.notes, *(f"suspicious: {s}" for s in suspicious)]})
    if run.status is InstanceStatus.UNRESOLVED:  # tests ran and were parsed: grade them
        report = verdict.graded(report, task, spec, run, strict=ctx.strict, suspicious=suspicious)
    return run, report


def _write_run(work: Path, run: TestRun) -> None:
    write_text_atomic(work / "eval.sh", run.script or "# tests did not run\n")
    write_text_atomic(work / "test_output.txt", run.output)
    if run.env_manifest:  # what was installed, from which date, with which interpreter
        write_json(work / "env.json", run.env_manifest)
    if run.runner_report.raw:
        write_text_atomic(work / RUNNER_REPORT_ARTIFACT, run.runner_report.raw.decode("utf-8", "replace"))


def _finish(work: Path, final: Path, log: InstanceLog, report: InstanceReport) -> InstanceReport:
    log.info(f"status: {report.status.value}" + (f" ({report.reason})" if report.reason else ""))
    log.close()  # every line is in the file before the folder moves
    artifacts.finish_instance(work, final, report)
    return report
