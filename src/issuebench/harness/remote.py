"""eval on a remote executor: each (task, prediction) is shipped as a record, graded on a worker in a
scratch folder, and its artifact files come back to the driver, which writes them into the run.

Resume is the local one: the driver ships the instance's previous result.json with the record, and
the worker's evaluate_instance reuses it when its cache key still matches (same task, patch, spec,
harness and limits), exactly as a local rerun does.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from issuebench import config
from issuebench.executors import Failure
from issuebench.files import write_text_atomic
from issuebench.harness import artifacts, staging
from issuebench.harness.context import EvalContext, build_context
from issuebench.harness.instance import evaluate_instance
from issuebench.harness.options import EvalOptions
from issuebench.models import InstanceReport, InstanceStatus, Prediction, Task

LOG_FILE = "run_instance.log"


@dataclass(frozen=True)
class EvalRecord:
    task: Task
    prediction: Prediction
    options: EvalOptions  # the run's own, whole: the worker makes its context from it as the driver did
    previous_result: str | None = None  # the driver's result.json for this instance, if any


@dataclass(frozen=True)
class EvalOutcome:
    report: InstanceReport
    files: dict[str, bytes]  # artifact name -> content, as evaluate_instance wrote them
    worker: str = ""  # host and pid that ran it, for the instance's log


# One context per worker process and run: the sandbox check and env builder are made once.
_CONTEXTS: dict[EvalOptions, EvalContext] = {}


def worker_context(options: EvalOptions) -> EvalContext:
    """The run's EvalContext made on a worker from the driver's options, once per process (agent
    and synth may reuse it). Only where artifacts go differs: a scratch folder the driver reads back."""
    ctx = _CONTEXTS.get(options)
    if ctx is None:

        # Among the workspaces, named as one (ws-PID-...): a worker killed with its cluster
        # leaves it behind, and the next run's sweep of dead processes' workspaces removes it.
        scratch = Path(tempfile.mkdtemp(prefix=f"ws-{os.getpid()}-worker-", dir=config.workspaces_dir()))
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
        ctx = build_context(replace(options, output_dir=scratch))
        _CONTEXTS[options] = ctx
    return ctx


def evaluate_record(record: EvalRecord) -> EvalOutcome:
    """Runs on a worker: grade one prediction in a scratch folder and hand back its files."""

    ctx = worker_context(record.options)
    pred = record.prediction
    inst_dir = ctx.layout.instance_dir(pred.model_name_or_path, record.task.instance_id)
    shutil.rmtree(inst_dir, ignore_errors=True)  # a retried record starts clean
    if record.previous_result is not None:
        write_text_atomic(inst_dir / artifacts.RESULT_FILE, record.previous_result)
    try:
        report = evaluate_instance(record.task, pred, ctx)
        files = {p.name: p.read_bytes() for p in inst_dir.iterdir() if p.is_file()} if inst_dir.is_dir() else {}
    finally:
        shutil.rmtree(inst_dir, ignore_errors=True)
    return EvalOutcome(report, files, f"{socket.gethostname()} pid {os.getpid()}")


def write_outcome(inst_dir: Path, outcome: EvalOutcome) -> None:
    """Driver side: the files into the run's instance folder, which takes its place whole (a Ctrl-C
    halfway leaves the folder as it was: harness.staging)."""
    work = staging.open_staging(inst_dir)
    try:
        for name, data in outcome.files.items():
            if name == artifacts.RESULT_FILE or "/" in name or name.startswith("."):
                continue
            if name == LOG_FILE:  # the log grows across reruns, as locally
                with (work / name).open("ab") as fh:
                    fh.write(data + (f"ran on {outcome.worker}\n".encode() if outcome.worker else b""))
            else:
                write_text_atomic(work / name, data.decode("utf-8", errors="replace"))
        artifacts.finish_instance(work, inst_dir, outcome.report)
    finally:
        staging.drop_staging(inst_dir)


def failed_report(task: Task, pred: Prediction, failure: Failure) -> InstanceReport:
    """The report of an instance that produced none: the harness crashed on it, or its worker died."""
    lost = failure.kind == "worker_lost"
    return InstanceReport(instance_id=task.instance_id, model_name_or_path=pred.model_name_or_path,
                          status=InstanceStatus.WORKER_LOST if lost else InstanceStatus.ERROR, repo=task.repo,
                          cost=pred.cost, reason=f"{failure.kind}: {failure.reason}" if lost
                          else f"harness error: {failure.reason}")


def record_for(task: Task, pred: Prediction, ctx: EvalContext) -> EvalRecord:
    """What a worker needs for one instance: the run's options and the driver's earlier result."""
    previous = ctx.layout.instance_dir(pred.model_name_or_path, task.instance_id) / artifacts.RESULT_FILE
    text = previous.read_text(encoding="utf-8") if ctx.use_cache and previous.is_file() else None
    return EvalRecord(task, pred, ctx.options, text)
