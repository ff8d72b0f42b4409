"""eval on a remote executor: each (task, prediction) is shipped as a record, graded on a worker in a
scratch folder, and its artifact files come back to the driver, which writes them into the run.

Resume is the local one: the driver ships the instance's previous result.json with the record, and
the worker's evaluate_instance reuses it when its cache key still matches (same task, patch, spec,
harness and limits), exactly as a local rerun does.
"""

from __future__ import annotations

import atexit
import os
import pickle
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from issuebench import config
from issuebench.executors.base import Executor, Failure
from issuebench.harness import artifacts
from issuebench.harness.instance import EvalContext
from issuebench.models import InstanceReport, InstanceStatus, Prediction, Task

LOG_FILE = "run_instance.log"


@dataclass(frozen=True)
class ContextOptions:
    """What a worker needs to rebuild the run's EvalContext (paths must exist on every node)."""

    run_id: str
    repos_dir: Path | None
    recipes_dir: Path | None
    no_sandbox: bool
    strict: bool
    allow_clone: bool
    use_cache: bool
    python_fallback: str
    backend: str
    keep_workspaces: bool
    limits: object  # issuebench.sandbox.Limits
    offline: bool = False

    @classmethod
    def of(cls, ctx: EvalContext) -> ContextOptions:
        return cls(run_id=ctx.layout.run_id, repos_dir=ctx.repos_dir, recipes_dir=ctx.recipes_dir,
                   no_sandbox=getattr(ctx.sandbox, "name", "") == "none", strict=ctx.strict,
                   allow_clone=ctx.allow_clone, use_cache=ctx.use_cache,
                   python_fallback=getattr(ctx.env_builder, "python_fallback", "error"),
                   backend=ctx.backend, keep_workspaces=ctx.keep_workspace, limits=ctx.limits,
                   offline=bool(getattr(ctx.env_builder, "offline", False)))


@dataclass(frozen=True)
class EvalRecord:
    task: Task
    prediction: Prediction
    options: ContextOptions
    previous_result: str | None = None  # the driver's result.json for this instance, if any


@dataclass(frozen=True)
class EvalOutcome:
    report: InstanceReport
    files: dict[str, bytes]  # artifact name -> content, as evaluate_instance wrote them
    worker: str = ""  # host and pid that ran it, for the instance's log


# One context per worker process and run: the sandbox check and env builder are made once.
# Keyed by the options' pickle (Limits is a plain, unhashable dataclass).
_CONTEXTS: dict[bytes, EvalContext] = {}


def worker_context(options: ContextOptions) -> EvalContext:
    """The run's EvalContext rebuilt on a worker, once per process (agent and synth may reuse it)."""
    key = pickle.dumps(options)
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        from issuebench.harness.run import build_context

        # Under the cache root, named as a workspace (ws-PID-...): a worker killed with its cluster
        # leaves it behind, and the next run's sweep of dead processes' workspaces removes it.
        scratch = Path(tempfile.mkdtemp(prefix=f"ws-{os.getpid()}-worker-", dir=config.workspaces_dir()))
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
        extra = {"offline": True} if options.offline else {}
        ctx = build_context(output_dir=scratch, run_id=options.run_id, repos_dir=options.repos_dir,
                            recipes_dir=options.recipes_dir, no_sandbox=options.no_sandbox,
                            strict=options.strict, allow_clone=options.allow_clone, use_cache=options.use_cache,
                            python_fallback=options.python_fallback, backend=options.backend,
                            keep_workspaces=options.keep_workspaces, **extra)
        ctx = replace(ctx, limits=options.limits)
        _CONTEXTS[key] = ctx
    return ctx


def evaluate_record(record: EvalRecord) -> EvalOutcome:
    """Runs on a worker: grade one prediction in a scratch folder and hand back its files."""
    from issuebench.harness.run import _guarded

    ctx = worker_context(record.options)
    pred = record.prediction
    inst_dir = ctx.layout.instance_dir(pred.model_name_or_path, record.task.instance_id)
    shutil.rmtree(inst_dir, ignore_errors=True)  # a retried record starts clean
    if record.previous_result is not None:
        artifacts.write_text_atomic(inst_dir / artifacts.RESULT_FILE, record.previous_result)
    try:
        report = _guarded(record.task, pred, ctx)
        files = {p.name: p.read_bytes() for p in inst_dir.iterdir() if p.is_file()} if inst_dir.is_dir() else {}
    finally:
        shutil.rmtree(inst_dir, ignore_errors=True)
    return EvalOutcome(report, files, f"{socket.gethostname()} pid {os.getpid()}")


def write_outcome(inst_dir: Path, outcome: EvalOutcome) -> None:
    """Driver side: the files into the run's instance folder, result.json last (it marks the end)."""
    inst_dir.mkdir(parents=True, exist_ok=True)
    for name, data in outcome.files.items():
        if name == artifacts.RESULT_FILE or "/" in name or name.startswith("."):
            continue
        if name == LOG_FILE:  # the log grows across reruns, as locally
            with (inst_dir / name).open("ab") as fh:
                fh.write(data + f"ran on {outcome.worker}\n".encode())
        else:
            artifacts.write_text_atomic(inst_dir / name, data.decode("utf-8", errors="replace"))
    artifacts.write_instance_result(inst_dir, outcome.report)


def _lost_report(record: EvalRecord, failure: Failure) -> InstanceReport:
    status = InstanceStatus.WORKER_LOST if failure.kind == "worker_lost" else InstanceStatus.ERROR
    pred = record.prediction
    return InstanceReport(instance_id=record.task.instance_id, model_name_or_path=pred.model_name_or_path,
                          status=status, repo=record.task.repo, cost=pred.cost,
                          reason=f"{failure.kind}: {failure.reason}")


def evaluate_remotely(executor: Executor, jobs: Iterable[tuple[Task, Prediction]],
                      ctx: EvalContext) -> Iterator[tuple[tuple[Task, Prediction], InstanceReport]]:
    """Driver side of a remote eval: ship, stream back, write. Yields (job, report) as they arrive."""
    options = ContextOptions.of(ctx)
    records: list[EvalRecord] = []
    for task, pred in jobs:
        previous = ctx.layout.instance_dir(pred.model_name_or_path, task.instance_id) / artifacts.RESULT_FILE
        text = previous.read_text(encoding="utf-8") if ctx.use_cache and previous.is_file() else None
        records.append(EvalRecord(task, pred, options, text))
    for index, outcome in executor.map_unordered(evaluate_record, records):
        record = records[index]
        inst_dir = ctx.layout.instance_dir(record.prediction.model_name_or_path, record.task.instance_id)
        if isinstance(outcome, Failure):
            report = _lost_report(record, outcome)
            inst_dir.mkdir(parents=True, exist_ok=True)
            with (inst_dir / LOG_FILE).open("a", encoding="utf-8") as fh:
                fh.write(f"{executor.name} executor: {report.reason}\n")
            artifacts.write_instance_result(inst_dir, report)
        else:
            report = outcome.report
            write_outcome(inst_dir, outcome)
        yield (record.task, record.prediction), report


def run_remote(executor: Executor, jobs: list[tuple[Task, Prediction]], ctx: EvalContext,
               on_result: Callable[[InstanceReport], None] | None = None,
               ) -> list[tuple[tuple[Task, Prediction], InstanceReport]]:
    """run_evaluation's remote branch: (job, report) in the order they finished.

    On Ctrl-C the records in flight are cancelled on the cluster and nothing of theirs is written
    (only records whose results arrived were): RunInterrupted, as for a local run.
    """
    finished: list[tuple[tuple[Task, Prediction], InstanceReport]] = []
    try:
        for job, report in evaluate_remotely(executor, jobs, ctx):
            finished.append((job, report))
            if on_result:
                on_result(report)
    except KeyboardInterrupt:
        from issuebench.harness.run import RunInterrupted

        in_flight = min(executor.workers, len(jobs) - len(finished))
        raise RunInterrupted(kept=len(finished), discarded=in_flight, at=time.time()) from None
    return finished
