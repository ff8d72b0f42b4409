"""Many instances: pick what to run, run it in parallel, write the summary per model."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from issuebench.envs import clear_failure
from issuebench.executors import Executor, Failure, Interrupted, LocalExecutor, drive
from issuebench.harness import staging
from issuebench.harness.artifacts import RESULT_FILE, RunLayout
from issuebench.harness.instance import EvalContext, evaluate_instance
from issuebench.harness.remote import (
    LOG_FILE,
    EvalOutcome,
    evaluate_record,
    failed_report,
    record_for,
    write_outcome,
)
from issuebench.harness.run_lock import run_locked
from issuebench.harness.summary import write_summary
from issuebench.harness.uv_cache import prune_uv_cache
from issuebench.models import InstanceReport, Prediction, Task

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
    notes: list[str] = field(default_factory=list)   # what the run did beyond its instances

    @property
    def reports(self) -> list[InstanceReport]:
        return [r for m in self.models for r in m.reports]


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def run_evaluation(tasks: Iterable[Task], predictions: Iterable[Prediction], ctx: EvalContext, *,
                   workers: int | None = None,
                   on_result: Callable[[InstanceReport], None] | None = None,
                   executor: Executor | None = None) -> EvaluationResult:
    """Evaluate every prediction whose task is in `tasks`; write one summary per model.

    `executor` (issuebench.executors.get_executor): None runs here in `workers` threads; ray ships
    each instance to a worker and writes what comes back. Either way one path (executors.drive).

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
    executor = executor or LocalExecutor(workers or default_workers())
    try:
        finished = _fan_out(jobs, ctx, executor, on_result)
    except Interrupted as stop:
        _forget_env_failures(ctx, since=stop.at - _SIGNAL_SLACK)
        raise
    reports: dict[str, list[InstanceReport]] = {m: [] for m in models}
    for (_task, pred), report in finished:
        reports[pred.model_name_or_path].append(report)
    # The builds' leftovers go when the run ends: no build runs beside the prune, none waits for it.
    result = EvaluationResult(run_id=ctx.layout.run_id, output_dir=ctx.layout.output_dir, notes=[n for n in [prune_uv_cache()] if n])
    for model, preds in models.items():
        path = write_summary(reports[model], run_id=ctx.layout.run_id, model=model,
                             output_dir=ctx.layout.output_dir, dataset_ids=list(by_id),
                             submitted_ids=[p.instance_id for p in preds])
        order = {p.instance_id: i for i, p in enumerate(preds)}
        reused, others = earlier[model]
        result.models.append(ModelRun(model, sorted(reports[model], key=lambda r: order[r.instance_id]), path,
                                      earlier_results=reused, other_instances=others))
    return result


def _fan_out(jobs: list[tuple[Task, Prediction]], ctx: EvalContext, executor: Executor,
             on_result: Callable[[InstanceReport], None] | None) -> list[tuple[tuple[Task, Prediction], InstanceReport]]:
    """Every job through the executor; the driver writes each result as it arrives.

    Locally an instance writes its own folder; on a remote executor it is graded in a worker's
    scratch folder and its files come back (harness.remote). A job that crashed the harness or lost
    its worker still gets its folder, with a status and a reason."""
    remote = executor.name != "local"
    records = [record_for(task, pred, ctx) for task, pred in jobs] if remote else jobs
    work = evaluate_record if remote else partial(_evaluate_job, ctx=ctx)
    finished: list[tuple[tuple[Task, Prediction], InstanceReport]] = []

    def handle(index: int, result: object) -> None:
        task, pred = jobs[index]
        inst_dir = ctx.layout.instance_dir(pred.model_name_or_path, task.instance_id)
        if isinstance(result, Failure):
            report = failed_report(task, pred, result)
            write_outcome(inst_dir, EvalOutcome(report, {"patch.diff": (pred.model_patch or "").encode(),
                                                         LOG_FILE: f"{executor.name} executor: {report.reason}\n".encode()}))
        elif isinstance(result, EvalOutcome):
            report = result.report
            write_outcome(inst_dir, result)
        else:
            report = result  # type: ignore[assignment]
        finished.append(((task, pred), report))
        if on_result:
            on_result(report)

    drive(executor, work, records, handle)
    return finished


def _evaluate_job(job: tuple[Task, Prediction], *, ctx: EvalContext) -> InstanceReport:
    return evaluate_instance(job[0], job[1], ctx)


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

    root = getattr(ctx.env_builder, "root", None)
    if root is None or not Path(root).is_dir():
        return
    for record in Path(root).glob("*.failed.json"):
        try:
            recent = record.stat().st_mtime >= since
        except OSError:
            continue
        if recent:
            clear_failure(Path(root), record.name[: -len(".failed.json")])


# Ctrl-C stopped the run: the executors' Interrupted, under the name the harness has always used.
RunInterrupted = Interrupted
