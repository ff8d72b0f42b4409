"""synth on a remote executor: each candidate is a record, validated (its covering tests run twice)
in a workbench of the worker's own; the Outcome comes back and the driver decides what to write.

The driver keeps everything stateful: the coverage map and baseline (made once, shipped once with
the function), the candidate log, the tasks repository, the rows and their issue text (so a model
client never leaves the driver). A worker builds one workbench per process and run, reused for
every candidate it gets, as a local thread does. A candidate whose worker is lost beyond the
retries (or whose worker could not build a workbench) is logged as `error` with `retry`: it is no
verdict on the candidate, and a rerun of the same output folder validates it again.
"""

from __future__ import annotations

import atexit
import os
import pickle
import socket
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from issuebench.envs import EnvBuilder
from issuebench.executors import Executor, Failure, Gate
from issuebench.models import EnvSpec
from issuebench.sandbox import get_sandbox
from issuebench.synth.base import Candidate
from issuebench.synth.coverage_map import CoverageMap
from issuebench.synth.validate import ERROR, Baseline, Outcome, check
from issuebench.synth.workbench import Workbench

if TYPE_CHECKING:
    from issuebench.synth.pipeline import Prepared
    from issuebench.synth.run import Run
    from issuebench.synth.workbench import Workbench


@dataclass(frozen=True)
class BenchOptions:
    """What a worker needs to make the run's workbench (the source must exist on every node)."""

    source: Path
    commit: str
    spec: EnvSpec          # the run's work spec (pytest + coverage)
    suite_args: tuple[str, ...]
    no_sandbox: bool


@dataclass(frozen=True)
class SynthJob:
    bench: BenchOptions
    cmap: CoverageMap
    base: Baseline
    timeout: float
    scope: str


_LOCAL = threading.local()  # per worker thread: options pickle -> its workbench


def worker_bench(options: BenchOptions) -> Workbench:
    """The run's workbench on this worker, made once per process (and thread), removed at exit."""

    benches: dict[bytes, Workbench] = getattr(_LOCAL, "benches", None) or {}
    _LOCAL.benches = benches
    key = pickle.dumps(options)
    if key not in benches:
        sandbox = get_sandbox(no_sandbox=options.no_sandbox)
        bench = Workbench(options.source, options.commit, options.spec, builder=EnvBuilder(sandbox=sandbox),
                          sandbox=sandbox, suite_args=options.suite_args)
        atexit.register(bench.close)  # a killed worker's workspace is swept by the next run instead
        benches[key] = bench
    return benches[key]


def check_record(cand: Candidate, *, job: SynthJob) -> tuple[Outcome, str]:
    """Runs on a worker: validate one candidate (check() never raises; it undoes its changes).
    Returns the outcome and the host and pid that validated it (for the candidate log)."""

    outcome = check(worker_bench(job.bench), cand, job.cmap, job.base, timeout=job.timeout, scope=job.scope)
    return outcome, f"{socket.gethostname()} pid {os.getpid()}"


def run_remote(executor: Executor, run: Run, todo: list[Candidate], p: Prepared) -> None:
    """Driver side of run_phase: ship candidates, record each outcome as it arrives.

    No candidate is shipped once --max-tasks are kept; those in flight still finish and are
    recorded, as the local pool's running ones are."""
    job = SynthJob(BenchOptions(run.source, run.commit, run.work_spec, tuple(run.test_args), run.opts.no_sandbox),
                   p.cmap, p.base, p.timeout, run.opts.scope)
    gate = Gate(todo, run.full)
    for index, outcome in executor.map_unordered(partial(check_record, job=job), gate):
        cand = todo[index]
        if isinstance(outcome, Failure):
            row = failed_row(cand, f"{executor.name} executor: {outcome.kind}: {outcome.reason}")
            run.log.add(row)
        else:
            try:
                row = run.record(cand, *outcome)  # logs it; a kept one is committed and written
            except Exception as exc:  # one bad candidate never stops the run (as locally)
                row = failed_row(cand, f"{type(exc).__name__}: {exc}", retry=False)
                run.log.add(row)
        run.progress(f"{cand.generator} {cand.id}: {row['status']} ({row['seconds']:.1f}s)")


def failed_row(cand: Candidate, reason: str, retry: bool = True) -> dict:
    row = {"id": cand.id, "generator": cand.generator, "status": ERROR, "seconds": 0.0, "reason": reason[:300]}
    if retry:
        row["retry"] = True  # the candidate log drops it on load: a rerun validates it again
    return row
