"""Execution validation: keep a candidate only when its gold patch turns tests from failing to passing.

For each task the tests named by the test patch run with the test patch alone ("before") and with
test patch + gold ("after"), each `repeats` times, through the harness (same sandbox, same
environments as `eval`, so a kept task is gradable as is).

  FAIL_TO_PASS: fails (FAILED, ERROR or missing) in every before-run, PASSED in every after-run.
  PASS_TO_PASS: PASSED in every run.
  A test whose outcome changes between runs of the same side is flaky: dropped and counted.
  A test PASSED in every before-run and failing in every after-run means the gold breaks tests.
  An id naming a file the test patch does not touch (`path::name` output of a pytest run inside a
  test) is in neither list. Every test in neither list is named with why, in Verdict.dropped.
A task is kept with >= 1 FAIL_TO_PASS test and no test broken by the gold; otherwise it is
rejected with one reason from pipeline.py's vocabulary.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from issuebench.collect import pipeline as P
from issuebench.collect.quality import quality_flags
from issuebench.collect.runnable_targets import with_runnable_targets
from issuebench.collect.test_lists import (
    OUTSIDE,
    classify,
    explain_dropped,
    outcomes_line,
    outside_test_files,
    scoped,
)
from issuebench.envs import resolve_spec
from issuebench.errors import IssuebenchError
from issuebench.executors import Executor, Failure, LocalExecutor, drive
from issuebench.grading import exit_code_unexplained
from issuebench.harness import (
    EvalOptions,
    InstanceLog,
    build_context,
    files_in_diff,
    resolve_task_spec,
    run_tests,
    when_tests_cannot_run,
)
from issuebench.models import EnvSpec, InstanceStatus, PatchStatus, Task, TestStatusMap
from issuebench.repos import find_repo
from issuebench.setup import fallback_spec, import_failure, remembered, remembered_spec, suite_paths

FALLBACK = "setup fallback"  # how every note of eval/validate --setup-fallback starts


class TestRunLike(Protocol):
    status: InstanceStatus
    reason: str
    status_map: TestStatusMap
    patch_status: PatchStatus | None
    durations: dict[str, float]


class Runner(Protocol):
    """(task, model patch or None) -> the harness's TestRun; `time_limit` (seconds) lowers the
    run's own limit for this one run."""

    def __call__(self, task: Task, model_patch: str | None, time_limit: float | None = None) -> TestRunLike: ...


# The unfixed code's runs may take this many times the fixed code's test time, and never less than
# the floor: a before-run past that hangs or crawls (aiosqlite's connection thread, never stopped
# before its fix, kept the test process alive until the limit), so the task is rejected in a minute,
# not at the whole --timeout, and no eval of a patch that fixes nothing would end before its limit.
BEFORE_LIMIT_FACTOR = 10.0
BEFORE_LIMIT_FLOOR = 60.0


@dataclass
class Verdict:
    task: Task
    kept: bool
    reason: P.Rejection | str = ""   # a Rejection when not kept
    detail: str = ""
    flaky: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    set_up: bool = False     # the environment was built and the tests ran at least once
    validated: bool = False  # every run completed, so the lists are meaningful
    runs: int = 0
    test_seconds: float = 0.0
    seconds: float = 0.0
    # test id -> why it is in neither list (flaky, skipped, failing on both sides, ...), and each
    # run's status map, so a user can see what validate saw without running it again.
    dropped: dict[str, str] = field(default_factory=dict)
    before: list[TestStatusMap] = field(default_factory=list)
    after: list[TestStatusMap] = field(default_factory=list)
    # What --setup-fallback did (the runs' "setup fallback" notes); a kept row then carries setup's recipe.
    notes: list[str] = field(default_factory=list)


def _run_failure(run: TestRunLike, gold: bool) -> tuple[P.Rejection, str] | None:
    """The rejection reason when a run did not produce test results worth reading."""
    status = run.status
    if status in (InstanceStatus.RESOLVED, InstanceStatus.UNRESOLVED):
        return None
    if status is InstanceStatus.ENV_FAILED:
        return P.INSTALL_FAILED, run.reason
    if status is InstanceStatus.TIMEOUT:
        return P.TIMEOUT, run.reason
    if gold and status in (InstanceStatus.APPLY_FAILED, InstanceStatus.INVALID_PATCH):
        return P.GOLD_DOES_NOT_APPLY, run.reason
    if status is InstanceStatus.TEST_PATCH_FAILED:
        return P.TEST_PATCH_DOES_NOT_APPLY, run.reason
    if status is InstanceStatus.LOG_UNPARSEABLE and not gold:
        return None  # before the fix the test module may not even import: every test fails
    return P.RUN_FAILED, f"{status.value}: {run.reason}"


def _with_setup_reason(task: Task, detail: str) -> str:
    """An install failure's detail, with why setup found no recipe for the task's version when it
    tried (collect's setup or --setup-fallback's): "no environment recipe" alone hides the cause."""
    entry = remembered(task)
    if entry and not entry.get("accepted"):
        return f"setup of {task.repo} {task.version} found no recipe: {entry.get('reason') or 'unknown'}; {detail}"
    return detail


def validate_task(task: Task, runner: Runner, repeats: int = 3) -> Verdict:
    """Re-validate one task from scratch (existing FAIL_TO_PASS / PASS_TO_PASS are ignored).

    In phases: a row without a test or a code change is refused unrun -> the before- and
    after-runs, `repeats` times (_repeated_runs) -> the lists and the verdict (_judge)."""
    start = time.monotonic()
    task = task.model_copy(update={"FAIL_TO_PASS": [], "PASS_TO_PASS": []})
    verdict = Verdict(task, kept=False)
    if not task.test_patch.strip():
        verdict.reason = P.NO_TEST_CHANGE
        return verdict
    if not task.patch.strip():
        verdict.reason = P.NO_CODE_CHANGE
        return verdict
    runs = _repeated_runs(task, runner, repeats, verdict)
    if runs is not None:
        _judge(verdict, runner, *runs)
    verdict.seconds = time.monotonic() - start
    return verdict


def _repeated_runs(task: Task, runner: Runner, repeats: int,
                   verdict: Verdict) -> tuple[list[TestStatusMap], list[TestStatusMap], set[str]] | None:
    """(before-runs, after-runs, ids outside the test patch's files); None when a run produced no
    results worth reading (the verdict then says why)."""
    before: list[TestStatusMap] = []
    after: list[TestStatusMap] = []
    test_files = files_in_diff(task.test_patch)
    outside: set[str] = set()
    fixed_seconds = 0.0
    for attempt in range(max(1, repeats)):
        # The fixed code runs first: its test time bounds the unfixed run's (BEFORE_LIMIT_FACTOR).
        for gold, maps in ((True, after), (False, before)):
            limit = None if gold else max(BEFORE_LIMIT_FLOOR, BEFORE_LIMIT_FACTOR * fixed_seconds)
            run = runner(task, task.patch if gold else None, time_limit=limit)
            failure = _count_run(task, run, gold, verdict)
            if failure:
                verdict.reason, verdict.detail = failure
                if failure[0] == P.TIMEOUT and not gold:
                    verdict.detail = _before_timeout_detail(run, fixed_seconds)
                return None
            if gold:
                fixed_seconds = max(fixed_seconds, run.durations.get("tests", 0.0))
            maps.append(dict(run.status_map))
        outside = outside_test_files({n for run in (*before, *after) for n in run}, test_files)
        if attempt == 0 and not classify(scoped(before, outside), scoped(after, outside))["FAIL_TO_PASS"]:
            break  # more runs can only remove tests from FAIL_TO_PASS: the verdict is settled
    return before, after, outside


def _before_timeout_detail(run: TestRunLike, fixed_seconds: float) -> str:
    return (f"without the fix the tests ran past their limit ({run.reason}); with it they took "
            f"{fixed_seconds:.1f}s (the limit without the fix: {BEFORE_LIMIT_FACTOR:g} times that, "
            f"{BEFORE_LIMIT_FLOOR:g}s at least, --timeout at most): they hang or crawl before the fix")


def _count_run(task: Task, run: TestRunLike, gold: bool, verdict: Verdict) -> tuple[P.Rejection, str] | None:
    """Add one run to the verdict's counts and notes; the rejection it makes, if any."""
    verdict.runs += 1
    verdict.notes += [n for n in getattr(run, "notes", []) if n.startswith(FALLBACK) and n not in verdict.notes]
    verdict.test_seconds += run.durations.get("tests", 0.0)
    failure = _run_failure(run, gold)
    if failure is None or failure[0] != P.INSTALL_FAILED:
        verdict.set_up = True
    if failure is None and gold and exit_code_unexplained(run.status_map, getattr(run, "returncode", None)):
        # eval never resolves a run whose command fails with no failing test (yarl's
        # coverage fail-under): a task kept on it could not be resolved by any patch.
        failure = (P.RUN_FAILED, f"with the gold patch the test command exits {run.returncode} and no "
                                 "test fails (a coverage threshold, say): eval would resolve nothing")
    if failure and failure[0] == P.INSTALL_FAILED:
        failure = (failure[0], _with_setup_reason(task, failure[1]))
    return failure


def _judge(verdict: Verdict, runner: Runner, before: list[TestStatusMap], after: list[TestStatusMap],
           outside: set[str]) -> None:
    """The lists from every run, why each other test is in neither, and kept or the reason not."""
    task = verdict.task
    verdict.validated = True
    verdict.before, verdict.after = before, after
    env_used = getattr(runner, "env_used", None)
    if verdict.notes and env_used is not None:  # the row must name the environment its lists came from
        task.env = env_used(task) or task.env
    before, after = scoped(before, outside), scoped(after, outside)
    verdict.dropped = {**explain_dropped(before, after), **{
        name: f"{OUTSIDE} (before: {outcomes_line(verdict.before, name)}; after: {outcomes_line(verdict.after, name)})"
        for name in sorted(outside)}}
    lists = classify(before, after)
    verdict.flaky, verdict.broken = lists["flaky"], lists["broken"]
    task.FAIL_TO_PASS, task.PASS_TO_PASS = lists["FAIL_TO_PASS"], lists["PASS_TO_PASS"]
    if not task.FAIL_TO_PASS:
        verdict.reason = P.NO_FAIL_TO_PASS
        never = _never_imported(after)
        if lists["flaky"]:
            verdict.detail = f"{len(lists['flaky'])} flaky test(s) dropped"
        elif never:
            # Why no test could go from failing to passing: its module imports on neither side
            # (cf-xarray's open tutorial datasets from the internet when imported).
            verdict.detail = f"with the fix too, test modules failed to import: {', '.join(never[:5])}"
    elif verdict.broken:
        verdict.reason = P.GOLD_BREAKS_TESTS
        verdict.detail = ", ".join(verdict.broken[:5])
    else:
        verdict.kept = True
        task.quality_flags = quality_flags(task, before)  # type: ignore[attr-defined]


def _never_imported(runs: list[TestStatusMap]) -> list[str]:
    """Test modules that failed to import in every one of the runs."""
    return sorted(t for t in (runs[0] if runs else {}) if all(t in run and import_failure(t, run[t]) for run in runs))


@dataclass
class ValidateResult:
    verdicts: list[Verdict]
    table: P.PipelineTable

    @property
    def kept(self) -> list[Task]:
        return [v.task for v in self.verdicts if v.kept]


def validate(tasks: Iterable[Task], runner: Runner, *, repeats: int = 3, workers: int = 1,
             on_verdict: Callable[[Verdict], None] | None = None,
             executor: Executor | None = None) -> ValidateResult:
    """Validate many tasks through the one fan-out path (executors.drive): here in `workers`
    threads (the work is in subprocesses), or on `executor` (issuebench.executors.get_executor; a
    remote one needs `runner` to pickle, as harness_runner's does). Verdicts in the tasks' order; a
    task that raises or loses its worker is rejected as run_failed."""
    tasks = list(tasks)
    verdicts: list[Verdict | None] = [None] * len(tasks)

    def handle(index: int, result: Verdict | Failure) -> None:
        if isinstance(result, Failure):
            result = Verdict(tasks[index], kept=False, reason=P.RUN_FAILED, detail=_failure_detail(result))
        verdicts[index] = result
        if on_verdict:
            on_verdict(result)

    work = partial(_validate_one, runner=runner, repeats=repeats)
    drive(executor or LocalExecutor(max(1, workers)), work, tasks, handle)
    done = [v for v in verdicts if v is not None]
    return ValidateResult(done, tally(done))


def _validate_one(task: Task, *, runner: Callable, repeats: int) -> Verdict:
    return validate_task(task, runner, repeats)


def _failure_detail(failure: Failure) -> str:
    """What raised ("RuntimeError: ..."), or that the worker was lost and why."""
    return failure.reason if failure.kind == "error" else f"{failure.kind}: {failure.reason}"


def tally(verdicts: Iterable[Verdict]) -> P.PipelineTable:
    table = P.PipelineTable()
    for verdict in verdicts:
        table.add("set up", int(verdict.set_up))
        table.add("validated", int(verdict.validated))
        table.add("kept", int(verdict.kept))
        table.flaky_tests += len(verdict.flaky)
        if not verdict.kept:
            table.reject(verdict.reason)
    return table


def harness_runner(*, repos_dir: Path | None, recipe: EnvSpec | None = None,
                   recipes_dir: Path | None = None, timeout: float = 1800.0,
                   no_sandbox: bool = False, work_dir: Path,
                   setup_fallback: bool = False) -> tuple[Runner, Callable[[Task], Task]]:
    """A runner over the lead's harness, and a function that embeds each task's recipe (`env`).

    The spec is resolved once per task (row `env` > --recipe > recipes) and passed to every run,
    so all repeats of a task use the same environment. It is resolved as `eval` resolves it, with
    the task's clone at hand: the date comes from environment_setup_commit, so a validated row runs
    in the very environment eval builds for it (and every task of a version shares one).
    With `setup_fallback` (carried to every worker in the runner's options), a task without a
    recipe goes on without `env`, and the runs use the recipe `setup` finds for its version.
    """

    run = HarnessRunner(EvalOptions(output_dir=work_dir, run_id="validate", timeout=timeout,
                                    repos_dir=repos_dir, recipes_dir=recipes_dir, no_sandbox=no_sandbox,
                                    use_cache=False, setup_fallback=fallback_spec if setup_fallback else None))

    def with_env(task: Task) -> Task:
        if task.env is None and recipe is not None:
            task = task.model_copy(update={"env": recipe})
        try:
            clone = _clone_of(task, repos_dir)
            spec = resolve_task_spec(task, recipes_dir, clone)
        except IssuebenchError:
            if setup_fallback:
                return task  # the harness sets the version up (instance.run_tests)
            raise
        suite = suite_paths(clone, task.base_commit) if spec.kind == "node" and clone else None
        return task.model_copy(update={"env": with_runnable_targets(spec, task.test_patch, suite)})

    return run, with_env


def _clone_of(task: Task, repos_dir: Path | None) -> Path | None:
    """The task's repository as eval finds it (cloned when it may be), or None: then dates come
    from the row alone and the run itself says what is missing."""

    try:
        return find_repo(task.repo, repos_dir)
    except Exception:  # any failure here is reported by the run itself
        return None


class HarnessRunner:
    """The harness as a Runner. It pickles without its context, which is made again from the same
    options wherever it lands (a Ray worker), so validate can ship it with each task."""

    def __init__(self, options: EvalOptions) -> None:

        self.options = options
        self._ctx = build_context(options)  # here first: a missing sandbox fails before any task

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options, "_ctx": None}

    def __call__(self, task: Task, model_patch: str | None, time_limit: float | None = None) -> TestRunLike:

        if self._ctx is None:
            self._ctx = build_context(self.options)
        ctx = self._ctx
        if time_limit is not None and time_limit < ctx.limits.timeout:
            ctx = replace(ctx, limits=replace(ctx.limits, timeout=time_limit))
        # A row without `env` reaches here only with --setup-fallback: run_tests resolves, then falls back.
        spec = resolve_spec(task, recipes_dir=self.options.recipes_dir) if task.env is not None else None
        run = run_tests(task, model_patch, ctx, spec=spec, apply_test_patch=True)
        return when_tests_cannot_run(task, model_patch, ctx, run, run_tests, spec, InstanceLog(None))

    def env_used(self, task: Task) -> EnvSpec | None:
        """The recipe --setup-fallback remembered for the task's version (its runs' notes said so)."""

        return remembered_spec(task) if self.options.setup_fallback else None
