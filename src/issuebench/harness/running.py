"""A task's tests, run once: the phases below, in order, each a function of its own.

1. `run_tests`: the repository, the recipe (or the setup fallback's), a fresh workspace at the base
   commit; removed afterwards unless kept.
2. `_prepare_env`: the environment, built from the pristine workspace before any model code is in
   the tree (a hostile patch never reaches the shared environment), and what the run needs beyond
   it, by the environment's kind (envs.kinds; for Python the commit's own layer of requirements,
   read from the base commit, so a patch never chooses what is installed); then `_lay_prebuilt`:
   the pristine checkout's build products (the recipe's pre_test, made once per checkout and env).
3. `_apply_model_patch`: the model's patch, then every test, hook, test-runner and runner-config file
   it touched put back (guards), each said in the notes.
4. `_apply_test_patch`: the test patch's files reset to the base commit, then the test patch.
5. `_run_command`: the test command in the sandbox, the runner's own report beside it, the nonce
   markers and the exit status written around its output outside the sandbox.
6. `test_run.parse_run`: the output read into a status map (graded by the caller).

Every fault of the task becomes a status with a reason; nothing here raises for one.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from issuebench import config
from issuebench.envs import HelperFailed, RegistryUnreachable, RunPreparation
from issuebench.errors import IssuebenchError
from issuebench.harness import commands, guards
from issuebench.harness.compile_cache import compile_cache
from issuebench.harness.context import EvalContext
from issuebench.harness.docker_run import run_in_docker_backend
from issuebench.harness.eval_script import with_row_commands
from issuebench.harness.prebuilt import lay_prebuilt
from issuebench.harness.python_row_steps import with_python_row_steps
from issuebench.harness.recipe_fallback import env_for_task, other_recipe
from issuebench.harness.runlog import InstanceLog
from issuebench.harness.runner_report import run_reporting
from issuebench.harness.stale_compiled import drop_beside_changed
from issuebench.harness.submodules import fill_submodules
from issuebench.harness.task_version import resolve_with_version
from issuebench.harness.test_run import SANDBOX_STATUS, TestRun, explain, parse_run, tail
from issuebench.harness.workspace import (
    create_workspace,
    pristine_checkout,
    remove_workspace,
    reset_paths,
    workspace_notes,
)
from issuebench.models import EnvSpec, InstanceStatus, PatchStatus, Task
from issuebench.parsers import EXIT_CODE_MARKER
from issuebench.patch import apply_patch, files_touched, submodule_moves
from issuebench.repos import find_repo
from issuebench.sandbox import Limits

_APPLIED = (PatchStatus.APPLIED, PatchStatus.APPLIED_AFTER_REPAIR)

# Backends other than the local sandbox, by name (EvalOptions.backend): each runs a task's tests
# its own way and gives the same TestRun.
BACKENDS: dict[str, Callable[..., TestRun]] = {"docker": run_in_docker_backend}


def resolve_task_spec(task: Task, recipes_dir: Path | None, source: Path | None = None) -> EnvSpec:
    """The task's recipe. With the source clone, dates can come from environment_setup_commit,
    so every task of a version shares one environment, as the reference's per-version images do."""
    return resolve_with_version(task, recipes_dir, source)


def spec_for_run(task: Task, spec: EnvSpec) -> EnvSpec:
    """What a run of the task builds and runs with: its recipe's spec, with the row's own commands
    and Python steps (an install the row's eval_script makes becomes part of the environment)."""
    return with_python_row_steps(task, with_row_commands(task, spec))


def run_tests(task: Task, model_patch: str | None, ctx: EvalContext, *, spec: EnvSpec | None = None,
              log: InstanceLog | None = None, apply_test_patch: bool = True) -> TestRun:
    """Run the task's tests with `model_patch` applied (None: no patch). Never raises for task faults."""
    log = log or InstanceLog(None)
    if ctx.backend in BACKENDS:
        return BACKENDS[ctx.backend](task, model_patch, ctx, spec, log)
    t0 = time.monotonic()
    try:
        source = find_repo(task.repo, ctx.repos_dir, allow_clone=ctx.allow_clone)
    except IssuebenchError as exc:
        return TestRun(InstanceStatus.ERROR, f"no repository: {explain(exc)}")
    try:
        spec = spec or resolve_task_spec(task, ctx.recipes_dir, source)
    except IssuebenchError as exc:
        spec = other_recipe(task, ctx, source, f"no environment recipe: {explain(exc)}")
        if spec is None:
            return TestRun(InstanceStatus.ENV_FAILED, f"no environment recipe: {explain(exc)}")
    spec = spec_for_run(task, spec)
    run = TestRun(InstanceStatus.ERROR, exclude_newer=spec.exclude_newer)
    try:
        ws = create_workspace(source, task.base_commit, ctx.workspaces_dir, repo=task.repo, when=task.created_at)
    except IssuebenchError as exc:
        run.reason = f"no workspace: {explain(exc)}"
        return run
    run.durations["workspace"] = time.monotonic() - t0
    log.info(f"workspace at {task.base_commit[:12]} from {source.name}")
    _note(run, log, *workspace_notes(ws))
    if spec.submodules:
        _note(run, log, *fill_submodules(spec.submodules, ws, task.base_commit, ctx.repos_dir, ctx.allow_clone))
    try:
        return _in_workspace(task, model_patch, ctx, spec, ws, run, log, apply_test_patch, source)
    finally:
        if not ctx.keep_workspace:
            remove_workspace(ws)


def _in_workspace(task: Task, model_patch: str | None, ctx: EvalContext, spec: EnvSpec, ws: Path,
                  run: TestRun, log: InstanceLog, apply_test_patch: bool, source: Path) -> TestRun:
    t0 = time.monotonic()
    prepared = _prepare_env(task, ctx, spec, ws, run, log)
    run.durations["env"] = time.monotonic() - t0
    if prepared is None:
        return run
    spec, env, run_prep = prepared
    _lay_prebuilt(task, ctx, spec, env, run_prep, ws, run, log, source)
    test_files = commands.files_in_diff(task.test_patch)
    runner = guards.runner_files(ws, spec.test_cmd)   # read before the patch can add or move one
    if model_patch and model_patch.strip() and not _apply_model_patch(task, model_patch, ws, test_files, runner,
                                                                      run, log, apply_test_patch):
        return run
    if apply_test_patch and task.test_patch.strip() and not _apply_test_patch(task, ws, test_files, run, source,
                                                                                spec, ctx, log):
        return run
    if model_patch and model_patch.strip():
        _drop_stale_compiled(model_patch, ws, run, log)
    again = getattr(ctx.env_builder, "prepare_patched_run", None)   # other backends have none
    if model_patch and model_patch.strip() and again is not None:
        patched_prep = again(env, ws, run_prep)
        _note(run, log, *patched_prep.notes[len(run_prep.notes):])
        run_prep = patched_prep
    run = _run_command(task, ctx, spec, env, run_prep, ws, run, log)
    if "tests" in run.durations:
        _keep_for_later_runs(task, ctx, env, ws, source, log)
    return run


def _drop_stale_compiled(model_patch: str, ws: Path, run: TestRun, log: InstanceLog) -> None:
    """A compiled module beside a .py the patch changed would run the unpatched code: stale_compiled.py."""
    dropped = drop_beside_changed(ws, files_touched(model_patch))
    if dropped:
        _note(run, log, "compiled modules left out, the .py the patch changed running instead: " + ", ".join(dropped))


def _lay_prebuilt(task: Task, ctx: EvalContext, spec: EnvSpec, env: Any, prepared: RunPreparation, ws: Path,
                  run: TestRun, log: InstanceLog, source: Path) -> None:
    """The pristine checkout's build products (its recipe's pre_test, run once per checkout and
    environment before any patch is in the tree) over the workspace: prebuilt.py. Not for a row's
    own eval_script steps (`commands_from = "row"`): they are run as the row says, in every run,
    since nothing promises that running them twice over one tree is harmless."""
    if spec.commands_from == "row":
        return
    pristine = pristine_checkout(source, task.base_commit, task.repo)

    def in_sandbox(script: str) -> Any:
        # Only this pristine build gets the compile cache: a patched run's rebuild never does.
        cache = compile_cache(env.env_hash, prepared.env, pristine.name)
        result = ctx.sandbox.run(["bash", "-c", script], workspace=ws, binds=[*prepared.binds, *cache.binds],
                                 env={**prepared.env, **cache.env}, limits=_limits(ctx, spec), network=False,
                                 cwd=config.TESTBED_PATH)
        _note(run, log, cache.summary())
        return result

    notes, seconds = lay_prebuilt(in_sandbox, spec.pre_test, ws, pristine, env.env_hash)
    if seconds:
        run.durations["prebuild"] = seconds
    _note(run, log, *notes)


def _prepare_env(task: Task, ctx: EvalContext, spec: EnvSpec, ws: Path, run: TestRun,
                 log: InstanceLog) -> tuple[EnvSpec, Any, Any] | None:
    """(spec, env, what the run needs beyond it by the env's kind), or None with the run's status set."""
    try:
        spec, env = env_for_task(task, ctx, None, spec, ws)
    except RegistryUnreachable as exc:
        run.status, run.reason = InstanceStatus.NEEDS_REGISTRY, explain(exc)
        return None
    except IssuebenchError as exc:
        run.status, run.reason = InstanceStatus.ENV_FAILED, explain(exc)
        return None
    run.notes += [n for n in spec.notes if n.startswith(("setup fallback", "eval_script:"))]
    run.env_hash, run.python = env.env_hash, getattr(env, "python_version", None)
    run.env_manifest = getattr(env, "manifest", None)
    if run.env_manifest and run.env_manifest.get("exclude_newer"):
        run.exclude_newer = run.env_manifest["exclude_newer"]  # the date the build really used
    log.info(f"environment {env.env_hash} (python {run.python}, exclude_newer {spec.exclude_newer})")
    try:
        prepared = ctx.env_builder.prepare_run(env, ws)
    except HelperFailed as exc:
        # Graded without knowing what the commit needs, a gold patch could read as unresolved.
        run.status = InstanceStatus.ENV_FAILED
        run.reason = f"the commit's declared requirements could not be read: {explain(exc)}"
        return None
    _note(run, log, *prepared.notes)
    for line in prepared.log:
        log.info(line)
    return spec, env, prepared


def _apply_model_patch(task: Task, model_patch: str, ws: Path, test_files: list[str], runner: set[str],
                       run: TestRun, log: InstanceLog, apply_test_patch: bool) -> bool:
    result = apply_patch(ws, model_patch)
    run.patch_status, run.apply_method = result.status, result.method
    log.info(f"model patch: {result.status.value} ({result.method})")
    if result.status not in _APPLIED:
        run.status = InstanceStatus.INVALID_PATCH if result.status is PatchStatus.INVALID else InstanceStatus.APPLY_FAILED
        run.reason = f"model patch {result.status.value}: {tail(result.log)}"
        return False
    touched = files_touched(model_patch)
    undone = guards.undo_model_changes(ws, task.base_commit, touched, test_files, runner)
    if undone:
        _note(run, log, "undid model changes to test, hook or test-runner files: " + ", ".join(undone))
    replaced = [path for path in touched if path in test_files]
    if replaced and apply_test_patch:
        _note(run, log, "put back the test patch's files the model changed or deleted (the test patch "
                        "sets them): " + ", ".join(replaced))
    return True


def _apply_test_patch(task: Task, ws: Path, test_files: list[str], run: TestRun, source: Path,
                      spec: EnvSpec, ctx: EvalContext, log: InstanceLog) -> bool:
    """The task's own test patch; its images without data (SWE-bench's rows) come from the source
    clone, whose pull-request commits hold them (the workspace holds the base commit alone). A
    submodule it moves is filled again at the new commit when the recipe names its repository."""
    reset_paths(ws, task.base_commit, test_files)
    text, moves = submodule_moves(task.test_patch)
    result = apply_patch(ws, text, binaries_from=source) if text.strip() else None
    if result is not None and result.status not in _APPLIED:
        run.status = InstanceStatus.TEST_PATCH_FAILED
        run.reason = f"test patch does not apply: {tail(result.log)}"
        return False
    known = {path: spec.submodules[path] for path in moves if path in spec.submodules}
    _note(run, log, *fill_submodules(known, ws, task.base_commit, ctx.repos_dir, ctx.allow_clone, moved=moves),
          *(f"submodule {path}: the test patch moves it to {commit[:12]}, but no recipe names its repository"
            for path, commit in moves.items() if path not in known))
    return True


def _limits(ctx: EvalContext, spec: EnvSpec) -> Limits:
    """The run's limits, with the recipe's own process limit where it sets one."""
    return ctx.limits if spec.max_procs is None else replace(ctx.limits, max_procs=spec.max_procs)


def _run_command(task: Task, ctx: EvalContext, spec: EnvSpec, env: Any, prepared: RunPreparation, ws: Path,
                 run: TestRun, log: InstanceLog) -> TestRun:
    nonce = secrets.token_hex(16)
    run.command = commands.test_command(spec, task.test_patch)
    run.script = commands.eval_script(spec, task.test_patch, nonce)
    t0 = time.monotonic()
    res, run.runner_report = run_reporting(ctx.sandbox, ws, "\n".join([*spec.pre_test, run.command]),
                                           binds=prepared.binds, env=prepared.env, limits=_limits(ctx, spec),
                                           output_path=ws.parent / f"{ws.name}.out", log=log.info)
    run.durations["tests"] = time.monotonic() - t0
    run.returncode = res.returncode
    # The markers are written here, outside the sandbox, with a nonce the code under test never
    # sees: whatever it prints, it cannot open or close the section that gets graded. The exit
    # status follows the end marker, as the reference's 5.x logs record it.
    run.output = (f">>>>> Start Test Output {nonce}\n{res.output}\n>>>>> End Test Output {nonce}\n"
                  f"{EXIT_CODE_MARKER}: {res.returncode}\n")
    log.info(f"tests: {res.status} rc={res.returncode} in {res.duration:.2f}s"
             + ("" if run.runner_report.present else " (no runner report)"))
    if res.status != "ok":
        run.status, run.reason = SANDBOX_STATUS.get(res.status, InstanceStatus.ERROR), res.reason
        return run
    return parse_run(task, spec, run, nonce, res.returncode)


def _keep_for_later_runs(task: Task, ctx: EvalContext, env: Any, ws: Path, source: Path, log: InstanceLog) -> None:
    """What the environment's kind keeps from this run for the task's next ones (Python: bytecode
    in the pristine checkout); the verdict is already given, so a failure here only goes to the log."""
    keep = getattr(ctx.env_builder, "after_run", None)   # other backends have none
    if keep is None:
        return
    try:
        lines = keep(env, ws, pristine_checkout(source, task.base_commit, task.repo))
    except OSError as exc:
        lines = [f"nothing kept for later runs: {exc}"]
    for line in lines:
        log.info(line)


def _note(run: TestRun, log: InstanceLog, *notes: str) -> None:
    for note in notes:
        run.notes.append(note)
        log.info(note)
