"""One instance, end to end: workspace → environment → model patch → reset tests → test patch →
run in the sandbox → parse → grade → artifacts.

Every failure becomes a status with a reason; nothing raised here stops the rest of a run.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from issuebench import HARNESS_VERSION
from issuebench.code_digest import verdict_code
from issuebench.envs.dated_install import HelperFailed
from issuebench.errors import IssuebenchError
from issuebench.harness import artifacts, commands, guards, staging, tests_fallback, verdict
from issuebench.harness.context import EvalContext
from issuebench.harness.instance_requirements import layer_for
from issuebench.harness.numerics import with_common_numerics
from issuebench.harness.recipe_fallback import env_for_task, other_recipe
from issuebench.harness.runlog import InstanceLog
from issuebench.harness.runner_report import ARTIFACT as RUNNER_REPORT_ARTIFACT
from issuebench.harness.runner_report import RunnerReport, run_reporting
from issuebench.harness.task_version import log_version_notes
from issuebench.harness.verdict import parser_name
from issuebench.harness.workspace import create_workspace, remove_workspace, reset_paths, workspace_notes
from issuebench.models import (
    EnvSpec,
    InstanceReport,
    InstanceStatus,
    PatchStatus,
    Prediction,
    Task,
    TestStatusMap,
    stable_hash,
)
from issuebench.parsers.markers import EXIT_CODE_MARKER
from issuebench.repos.find import find_repo

SANDBOX_STATUS = {
    "timeout": InstanceStatus.TIMEOUT,
    "memory_limit": InstanceStatus.MEMORY_LIMIT,
    "process_limit": InstanceStatus.PROCESS_LIMIT,
    "output_limit": InstanceStatus.OUTPUT_LIMIT,
    "file_limit": InstanceStatus.FILE_LIMIT,
    "sandbox_failed": InstanceStatus.SANDBOX_FAILED,
}


@dataclass
class TestRun:
    """What running a task's tests produced, before grading."""

    __test__ = False  # not a pytest test class

    status: InstanceStatus
    reason: str = ""
    status_map: TestStatusMap = field(default_factory=dict)
    returncode: int | None = None
    output: str = ""
    test_output: str | None = None
    patch_status: PatchStatus | None = None
    apply_method: str | None = None
    env_hash: str | None = None
    python: str | None = None
    exclude_newer: str | None = None
    command: str = ""
    script: str = ""
    notes: list[str] = field(default_factory=list)
    durations: dict[str, float] = field(default_factory=dict)
    env_manifest: dict | None = None
    runner_report: RunnerReport = field(default_factory=RunnerReport)


def resolve_task_spec(task: Task, recipes_dir: Path | None, source: Path | None = None) -> EnvSpec:
    """The task's recipe. With the source clone, dates can come from environment_setup_commit,
    so every task of a version shares one environment, as the reference's per-version images do."""
    from issuebench.harness.task_version import resolve_with_version  # a missing version: from the repo

    return resolve_with_version(task, recipes_dir, source)


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
        "sandbox": getattr(ctx.sandbox, "name", "?"),
        "backend": ctx.backend,
        "timeout": getattr(limits, "timeout", None),
        # A stand-in interpreter (--python-fallback nearest) is a different experiment.
        "python_fallback": getattr(ctx.env_builder, "python_fallback", None),
        **({"setup_fallback": True} if ctx.setup_fallback else {}),  # only when on: other keys stay
    })[:24]


def _apply(ws: Path, patch_text: str):
    from issuebench.patch import apply_patch

    return apply_patch(ws, patch_text)


def run_tests(task: Task, model_patch: str | None, ctx: EvalContext, *, spec: EnvSpec | None = None,
              log: InstanceLog | None = None, apply_test_patch: bool = True) -> TestRun:
    """Run the task's tests with `model_patch` applied (None: no patch). Never raises for task faults."""
    log = log or InstanceLog(None)
    if ctx.backend == "docker":
        from issuebench.harness.docker_run import run_in_docker_backend

        return run_in_docker_backend(task, model_patch, ctx, spec, log)
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    try:
        source = find_repo(task.repo, ctx.repos_dir, allow_clone=ctx.allow_clone)
    except IssuebenchError as exc:
        return TestRun(InstanceStatus.ERROR, f"no repository: {_explain(exc)}")
    try:
        spec = spec or resolve_task_spec(task, ctx.recipes_dir, source)
    except IssuebenchError as exc:
        spec = other_recipe(task, ctx, source, f"no environment recipe: {_explain(exc)}")
        if spec is None:
            return TestRun(InstanceStatus.ENV_FAILED, f"no environment recipe: {_explain(exc)}")
    run = TestRun(InstanceStatus.ERROR, exclude_newer=spec.exclude_newer)
    try:
        ws = create_workspace(source, task.base_commit, ctx.workspaces_dir, repo=task.repo, when=task.created_at)
    except IssuebenchError as exc:
        run.reason = f"no workspace: {_explain(exc)}"
        return run
    timings["workspace"] = time.monotonic() - t0
    log.info(f"workspace at {task.base_commit[:12]} from {source.name}")
    for note in workspace_notes(ws):
        run.notes.append(note)
        log.info(note)
    try:
        return _run_in_workspace(task, model_patch, ctx, spec, ws, run, log, timings, apply_test_patch)
    finally:
        run.durations = timings
        if not ctx.keep_workspace:
            remove_workspace(ws)


def _run_in_workspace(task: Task, model_patch: str | None, ctx: EvalContext, spec: EnvSpec, ws: Path,
                      run: TestRun, log: InstanceLog, timings: dict[str, float],
                      apply_test_patch: bool) -> TestRun:
    # The environment is built (once per recipe) from a pristine workspace, before any model code
    # is in the tree: a hostile patch can never reach the shared environment.
    t0 = time.monotonic()
    try:
        spec, env = env_for_task(task, ctx, None, spec, ws)
    except IssuebenchError as exc:
        run.status, run.reason = InstanceStatus.ENV_FAILED, _explain(exc)
        return run
    run.notes += [n for n in spec.notes if n.startswith("setup fallback")]
    run.env_hash, run.python = env.env_hash, getattr(env, "python_version", spec.python)
    run.env_manifest = getattr(env, "manifest", None)
    if run.env_manifest and run.env_manifest.get("exclude_newer"):
        run.exclude_newer = run.env_manifest["exclude_newer"]  # the date the build really used
    log.info(f"environment {env.env_hash} (python {run.python}, exclude_newer {spec.exclude_newer})")
    # Read from the pristine base commit, before the model's patch: a patch never chooses what we install.
    try:
        layer, note = layer_for(env, ws, ctx.sandbox, ctx.env_builder)
    except HelperFailed as exc:
        # Graded without knowing what the commit needs, a gold patch could read as unresolved.
        run.status = InstanceStatus.ENV_FAILED
        run.reason = f"the commit's declared requirements could not be read: {_explain(exc)}"
        return run
    if note:
        run.notes.append(note)
        log.info(note)
    timings["env"] = time.monotonic() - t0

    test_files = commands.files_in_diff(task.test_patch)
    if model_patch and model_patch.strip():
        result = _apply(ws, model_patch)
        run.patch_status, run.apply_method = result.status, result.method
        log.info(f"model patch: {result.status.value} ({result.method})")
        if result.status not in (PatchStatus.APPLIED, PatchStatus.APPLIED_AFTER_REPAIR):
            run.status = (InstanceStatus.INVALID_PATCH if result.status is PatchStatus.INVALID
                          else InstanceStatus.APPLY_FAILED)
            run.reason = f"model patch {result.status.value}: {_tail(result.log)}"
            return run
        from issuebench.patch import files_touched

        touched = files_touched(model_patch)
        undone = guards.undo_model_changes(ws, task.base_commit, touched, test_files)
        if undone:
            run.notes.append("undid model changes to test or hook files: " + ", ".join(undone))
            log.info(run.notes[-1])
        replaced = [path for path in touched if path in test_files]
        if replaced and apply_test_patch:
            run.notes.append("put back the test patch's files the model changed or deleted (the test "
                             "patch sets them): " + ", ".join(replaced))
            log.info(run.notes[-1])

    if apply_test_patch and task.test_patch.strip():
        reset_paths(ws, task.base_commit, test_files)
        result = _apply(ws, task.test_patch)
        if result.status not in (PatchStatus.APPLIED, PatchStatus.APPLIED_AFTER_REPAIR):
            run.status = InstanceStatus.TEST_PATCH_FAILED
            run.reason = f"test patch does not apply: {_tail(result.log)}"
            return run

    nonce = secrets.token_hex(16)
    run.command = commands.test_command(spec, task.test_patch)
    run.script = commands.eval_script(spec, task.test_patch, nonce)
    body = "\n".join([*spec.pre_test, run.command])
    raw_path = ws.parent / f"{ws.name}.out"
    binds, run_env = env.binds(), env.run_env()
    if layer is not None:
        binds, run_env = [*binds, *layer.binds()], layer.apply(run_env)
    run_env, numerics = with_common_numerics(run_env, env, ws, ctx.sandbox)
    if numerics:
        log.info(numerics)
    t0 = time.monotonic()
    res, run.runner_report = run_reporting(ctx.sandbox, ws, body, binds=binds, env=run_env, limits=ctx.limits,
                                           output_path=raw_path, log=log.info)
    timings["tests"] = time.monotonic() - t0
    run.returncode = res.returncode
    # The markers are written here, outside the sandbox, with a nonce the code under test never
    # sees: whatever it prints, it cannot open or close the section that gets graded. The exit
    # status follows the end marker, as the reference's 5.x logs record it.
    run.output = (f">>>>> Start Test Output {nonce}\n{res.output}\n>>>>> End Test Output {nonce}\n"
                  f"{EXIT_CODE_MARKER}: {res.returncode}\n")
    log.info(f"tests: {res.status} rc={res.returncode} in {res.duration:.2f}s"
             + ("" if run.runner_report.present else " (no runner report)"))
    if res.status != "ok":
        run.status = SANDBOX_STATUS.get(res.status, InstanceStatus.ERROR)
        run.reason = res.reason
        return run

    return parse_run(task, spec, run, nonce, res.returncode)


def parse_run(task: Task, spec: EnvSpec, run: TestRun, nonce: str, returncode: int | None) -> TestRun:
    from issuebench.parsers import extract_test_output, get_parser
    from issuebench.parsers.evidence import suite_ran

    run.test_output = extract_test_output(run.output, nonce=nonce)
    if run.test_output is not None:
        run.test_output = guards.cut_after_runner_summary(run.test_output)
    if run.test_output is None:
        run.status, run.reason = InstanceStatus.LOG_UNPARSEABLE, "test output markers missing"
        return run
    run.status_map = get_parser(parser_name(task, spec), task=task)(run.test_output)
    # Parsers of fail_only rows record failures only: a clean run that shows the suite ran is graded.
    clean_fail_only = task.eval_type == "fail_only" and suite_ran(run.test_output)
    if not run.status_map and not clean_fail_only:
        run.status = InstanceStatus.LOG_UNPARSEABLE
        run.reason = f"no test results found in the output (exit code {returncode}): {_tail(run.test_output)}"
        return run
    run.status = InstanceStatus.UNRESOLVED  # graded by the caller
    return run


def _explain(exc: IssuebenchError) -> str:
    """An error's message with its hint, as one line for a report's reason."""
    return f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message


def _tail(text: str, lines: int = 6) -> str:
    return " | ".join(line.strip() for line in (text or "").strip().splitlines()[-lines:])


def evaluate_instance(task: Task, prediction: Prediction, ctx: EvalContext) -> InstanceReport:
    """Grade one prediction; returns the report.

    Its files are written as it goes in a hidden folder, which takes the place of the instance's
    folder when it finishes (harness.staging): an interrupted instance leaves its folder as it was."""
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
    artifacts.write_text_atomic(work / "patch.diff", prediction.model_patch or "")

    from issuebench.patch import check_patch

    early = check_patch(prediction.model_patch or "")
    if early is PatchStatus.EMPTY:
        return _finish(work, final, log, base.model_copy(update={
            "status": InstanceStatus.EMPTY, "reason": "empty patch: not run", "patch_status": early}))
    if early is PatchStatus.INVALID:
        return _finish(work, final, log, base.model_copy(update={
            "status": InstanceStatus.INVALID_PATCH, "reason": "the patch is not a unified diff",
            "patch_status": early}))

    source = None
    try:
        if ctx.backend != "docker":  # with docker, the repository is inside the image
            source = find_repo(task.repo, ctx.repos_dir, allow_clone=ctx.allow_clone)
    except IssuebenchError as exc:
        return _finish(work, final, log, base.model_copy(update={
            "status": InstanceStatus.ERROR, "reason": f"no repository: {_explain(exc)}"}))
    try:
        spec = resolve_task_spec(task, ctx.recipes_dir, source)
    except IssuebenchError as exc:
        spec = other_recipe(task, ctx, source, f"no environment recipe: {_explain(exc)}")
        if spec is None:
            return _finish(work, final, log, base.model_copy(update={
                "status": InstanceStatus.ENV_FAILED, "reason": f"no environment recipe: {_explain(exc)}"}))

    key = cache_key(task, prediction, spec, ctx)
    if ctx.use_cache:
        cached = artifacts.read_instance_result(final)
        # The run folder's own result follows the shared cache's rule: a fault of the machine is retried.
        if cached is not None and cached.cache_key == key and cached.status not in _NOT_CACHED:
            InstanceLog.append(final / staging.LOG_FILE, "result reused (same task, patch, spec and harness)")
            return cached
        from issuebench.harness.cache import restore

        if restore(key, work):
            restored = artifacts.read_instance_result(work)
            if restored is not None:
                # The same patch may come from another system: the verdict carries over, the name not.
                restored = restored.model_copy(update={
                    "model_name_or_path": prediction.model_name_or_path, "cost": prediction.cost})
                log.info(f"result restored from the cache (key {key})")
                return _finish(work, final, log, restored)

    log.info(f"evaluating {task.instance_id} for {prediction.model_name_or_path} (cache key {key})")
    version_notes = log_version_notes(spec, log)
    start = time.monotonic()
    run = run_tests(task, prediction.model_patch, ctx, spec=spec, log=log)
    run = tests_fallback.when_tests_cannot_run(task, prediction.model_patch, ctx, run, run_tests, spec, log)
    artifacts.write_text_atomic(work / "eval.sh", run.script or "# tests did not run\n")
    artifacts.write_text_atomic(work / "test_output.txt", run.output)
    if run.env_manifest:  # what was installed, from which date, with which interpreter
        artifacts.write_json(work / "env.json", run.env_manifest)
    report = base.model_copy(update={
        "status": run.status, "reason": run.reason, "patch_status": run.patch_status,
        "apply_method": run.apply_method, "env_hash": run.env_hash, "python": run.python,
        "exclude_newer": run.exclude_newer, "cache_key": key, "notes": [*version_notes, *run.notes],
        "returncode": run.returncode,
        "patch_successfully_applied": run.patch_status in (PatchStatus.APPLIED, PatchStatus.APPLIED_AFTER_REPAIR),
        "durations": {**run.durations, "total": time.monotonic() - start},
    })
    suspicious = guards.suspicious_lines(prediction.model_patch or "")
    if suspicious:
        report = report.model_copy(update={"notes": [*report.notes, *(f"suspicious: {s}" for s in suspicious)]})
    if run.runner_report.raw:
        artifacts.write_text_atomic(work / RUNNER_REPORT_ARTIFACT, run.runner_report.raw.decode("utf-8", "replace"))
    if run.status is InstanceStatus.UNRESOLVED:  # tests ran and were parsed: grade them
        report = verdict.graded(report, task, spec, run, strict=ctx.strict, suspicious=suspicious)
    report = _finish(work, final, log, report)
    if ctx.use_cache and report.cache_key and report.status not in _NOT_CACHED and final.is_dir():
        from issuebench.harness.cache import store

        store(report.cache_key, final)
    return report


# Faults of the machine rather than of the patch are retried on the next run, never cached.
_NOT_CACHED = {InstanceStatus.ERROR, InstanceStatus.SANDBOX_FAILED, InstanceStatus.ENV_FAILED}


def _finish(work: Path, final: Path, log: InstanceLog, report: InstanceReport) -> InstanceReport:
    log.info(f"status: {report.status.value}" + (f" ({report.reason})" if report.reason else ""))
    log.close()  # every line is in the file before the folder moves
    artifacts.finish_instance(work, final, report)
    return report
