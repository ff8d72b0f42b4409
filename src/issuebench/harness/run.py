"""Many instances: pick what to run, run it in parallel, write the summary per model."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from issuebench.harness import staging
from issuebench.harness.artifacts import RESULT_FILE, RunLayout, finish_instance, write_text_atomic
from issuebench.harness.instance import EvalContext, evaluate_instance
from issuebench.harness.run_lock import run_locked
from issuebench.harness.summary import write_summary
from issuebench.interrupts import StopFlag, kill_descendants, signal_of, stop_signals_held, working_for
from issuebench.models import InstanceReport, InstanceStatus, Prediction, Task

if TYPE_CHECKING:
    from issuebench.executors import Executor

J = TypeVar("J")
R = TypeVar("R")


@dataclass
class ModelRun:
    model: str
    reports: list[InstanceReport]
    summary_path: Path
    earlier_results: int = 0  # results this run id already held for this run's instances
    other_instances: list[str] = field(default_factory=list)  # folders of ids this run does not evaluate


@dataclass
class EvaluationResult:
    run_id: str
    output_dir: Path
    models: list[ModelRun] = field(default_factory=list)

    @property
    def reports(self) -> list[InstanceReport]:
        return [r for m in self.models for r in m.reports]


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def _guarded(task: Task, prediction: Prediction, ctx: EvalContext) -> InstanceReport:
    """An instance that crashes the harness still gets a status and a reason; the run goes on."""
    try:
        return evaluate_instance(task, prediction, ctx)
    except Exception as exc:  # one bad instance never stops the run
        report = InstanceReport(instance_id=task.instance_id, model_name_or_path=prediction.model_name_or_path,
                                status=InstanceStatus.ERROR, repo=task.repo,
                                reason=f"harness error: {type(exc).__name__}: {exc}")
        final = ctx.layout.instance_dir(prediction.model_name_or_path, task.instance_id)
        try:
            work = staging.open_staging(final)
            write_text_atomic(work / "patch.diff", prediction.model_patch or "")
            finish_instance(work, final, report)
        except OSError:
            pass
        finally:
            staging.drop_staging(final)
        return report


def run_evaluation(tasks: Iterable[Task], predictions: Iterable[Prediction], ctx: EvalContext, *,
                   workers: int | None = None,
                   on_result: Callable[[InstanceReport], None] | None = None,
                   executor: Executor | None = None) -> EvaluationResult:
    """Evaluate every prediction whose task is in `tasks`; write one summary per model.

    `executor` (issuebench.executors.get_executor): None or local runs here in threads; ray ships
    each instance to a worker and writes what comes back.

    Raises RunInterrupted on Ctrl-C (or SIGHUP, SIGTERM: interrupts.raise_on_stop_signals):
    finished instances stay on disk, those in flight leave no folder, no summary is written, and
    a rerun with the same run id picks up where this one stopped.

    Holds the run folder's lock throughout (run_lock): raises RunLocked at once when another
    process is evaluating the same run.
    """
    with run_locked(ctx.layout):
        return _run_evaluation(tasks, predictions, ctx, workers=workers, on_result=on_result, executor=executor)


def _run_evaluation(tasks: Iterable[Task], predictions: Iterable[Prediction], ctx: EvalContext, *,
                    workers: int | None, on_result: Callable[[InstanceReport], None] | None,
                    executor: Executor | None) -> EvaluationResult:
    tasks = list(tasks)
    by_id = {t.instance_id: t for t in tasks}
    predictions = [p for p in predictions if p.instance_id in by_id]
    models: dict[str, list[Prediction]] = {}
    for p in predictions:
        models.setdefault(p.model_name_or_path, []).append(p)
    for model in models:  # what a crashed run of this run id left (the lock makes this run its only writer)
        staging.sweep(ctx.layout.model_dir(model))
    earlier = {m: _earlier_results(ctx.layout, m, [p.instance_id for p in preds]) for m, preds in models.items()}

    def inst_dir(job: tuple[Task, Prediction]) -> Path:
        return ctx.layout.instance_dir(job[1].model_name_or_path, job[0].instance_id)

    jobs = [(by_id[p.instance_id], p) for p in predictions]
    if executor is not None and executor.name != "local":  # records go to workers; the driver writes
        from issuebench.harness.remote import run_remote

        finished = run_remote(executor, jobs, ctx, on_result)
    else:
        try:
            finished = run_jobs(jobs, lambda job: _guarded(job[0], job[1], ctx),
                                workers=workers or default_workers(),
                                on_done=(lambda _job, report: on_result(report)) if on_result else None,
                                discard=lambda job: staging.drop_staging(inst_dir(job)))
        except RunInterrupted as stop:
            _forget_env_failures(ctx, since=stop.at - _SIGNAL_SLACK)
            raise

    reports: dict[str, list[InstanceReport]] = {m: [] for m in models}
    for (_task, pred), report in finished:
        reports[pred.model_name_or_path].append(report)
    result = EvaluationResult(run_id=ctx.layout.run_id, output_dir=ctx.layout.output_dir)
    for model, preds in models.items():
        path = write_summary(reports[model], run_id=ctx.layout.run_id, model=model,
                             output_dir=ctx.layout.output_dir, dataset_ids=list(by_id),
                             submitted_ids=[p.instance_id for p in preds])
        order = {p.instance_id: i for i, p in enumerate(preds)}
        reused, others = earlier[model]
        result.models.append(ModelRun(model, sorted(reports[model], key=lambda r: order[r.instance_id]), path,
                                      earlier_results=reused, other_instances=others))
    return result


def _earlier_results(layout: RunLayout, model: str, ids: list[str]) -> tuple[int, list[str]]:
    """What a reused run id already holds: results for this run's ids (reused when nothing that can
    change a verdict changed), and instance folders of ids this run does not evaluate."""
    model_dir = layout.model_dir(model)
    if not model_dir.is_dir():
        return 0, []
    wanted = set(ids)
    held = sorted(d.name for d in model_dir.iterdir() if not staging.hidden(d) and (d / RESULT_FILE).is_file())
    return sum(i in wanted for i in held), [i for i in held if i not in wanted]


# The Ctrl-C reaches a build's uv (same process group) a moment before Python sees it.
_SIGNAL_SLACK = 2.0


def _forget_env_failures(ctx: EvalContext, *, since: float) -> None:
    """Environment builds the interrupt killed were recorded as failed builds, which later runs
    would serve back until --rebuild: forget those recorded since the interrupt."""
    from issuebench.envs import cache as env_cache

    root = getattr(ctx.env_builder, "root", None)
    if root is None or not Path(root).is_dir():
        return
    for record in Path(root).glob("*.failed.json"):
        try:
            recent = record.stat().st_mtime >= since
        except OSError:
            continue
        if recent:
            env_cache.clear_failure(Path(root), record.name[: -len(".failed.json")])


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or `signum`) stopped the run: `kept` instances had finished, `discarded` were in flight.

    A KeyboardInterrupt still, so that whatever does not handle it stops as Ctrl-C would."""

    def __init__(self, kept: int, discarded: int, at: float, signum: int = signal.SIGINT) -> None:
        super().__init__(f"interrupted; rerun to resume ({kept} finished instance(s) kept, "
                         f"{discarded} in flight discarded)")
        self.kept = kept
        self.discarded = discarded
        self.at = at  # when the run noticed the interrupt (time.time())
        self.signum = int(signum)  # read by interrupts.exit_status


def run_jobs(jobs: Sequence[J], work: Callable[[J], R], *, workers: int,
             on_done: Callable[[J, R], None] | None = None,
             discard: Callable[[J], None] | None = None) -> list[tuple[J, R]]:
    """Run `work` on every job, `workers` at a time; return (job, result) in the order they finished.

    On Ctrl-C (KeyboardInterrupt in the calling thread) nothing more is recorded (see interrupts),
    jobs not started are dropped, the processes of jobs in flight are killed, whatever those jobs
    wrote is discarded, and RunInterrupted is raised with the count of finished jobs.
    """
    flag = StopFlag()

    def in_worker(job: J) -> R:
        with working_for(flag):
            return work(job)

    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    futures = {pool.submit(in_worker, job): job for job in jobs}
    finished: list[tuple[J, R]] = []
    collected: set[Future[R]] = set()
    try:
        for future in as_completed(futures):
            collected.add(future)
            finished.append((futures[future], future.result()))
            if on_done:
                on_done(*finished[-1])
    except KeyboardInterrupt as stop:
        at = time.time()
        with stop_signals_held():  # a second Ctrl-C (or the SIGHUP after it) must not cut the clean-up short
            in_flight = _stop_jobs(pool, flag, [f for f in futures if f not in collected])
            for future in in_flight:
                if discard:
                    discard(futures[future])
        raise RunInterrupted(kept=len(finished), discarded=len(in_flight), at=at, signum=signal_of(stop)) from None
    pool.shutdown(wait=True)
    return finished


def _stop_jobs(pool: ThreadPoolExecutor, flag: StopFlag, pending: list[Future]) -> list[Future]:
    """Stop recording, drop what has not started, kill what runs; return the jobs that were running."""
    flag.stop()
    in_flight = [f for f in pending if not f.cancel()]
    # A job's thread may start its next step (a git, a uv, a sandbox) after a kill: keep killing
    # until every one has returned. Each step fails at once when its process dies.
    while in_flight:
        kill_descendants()
        if not wait(in_flight, timeout=0.2).not_done:
            break
    pool.shutdown(wait=True)
    return in_flight
