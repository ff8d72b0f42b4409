"""What every executor offers: run a function over many records, yield each result as it finishes.

The driver (the process the user started) owns every file a run writes; executors only compute.
A record that cannot be computed comes back as a `Failure`, never as an exception, so one lost
worker or one crashing record never stops a run.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from issuebench.errors import IssuebenchError
from issuebench.interrupts import signal_of

T = TypeVar("T")
R = TypeVar("R")

# How many times a record whose worker died is sent again before it is marked worker_lost.
# Two retries survive one unlucky kill plus one more without letting a record that kills every
# worker it touches (a memory bomb) cost more than three workers.
DEFAULT_RETRIES = 2

FailureKind = Literal["worker_lost", "error"]


@dataclass(frozen=True)
class Failure:
    """A record that produced no result: its worker died (after the retries) or the call raised."""

    kind: FailureKind
    reason: str


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGHUP, SIGTERM) stopped a fan-out: `kept` records had finished and were handled,
    `discarded` were in flight and left nothing behind.

    A KeyboardInterrupt still, so that whatever does not handle it stops as Ctrl-C would."""

    def __init__(self, kept: int, discarded: int, at: float, signum: int = signal.SIGINT) -> None:
        super().__init__(f"interrupted; rerun to resume ({kept} finished kept, {discarded} in flight discarded)")
        self.kept = kept
        self.discarded = discarded
        self.at = at  # when the driver noticed the interrupt (time.time())
        self.signum = int(signum)  # read by interrupts.exit_status


class Executor(Protocol):
    """Runs `fn(record)` for every record; `fn` and the records must pickle (they may travel)."""

    name: str
    workers: int

    def map_unordered(self, fn: Callable[[T], R], records: Sequence[T]) -> Iterator[tuple[int, R | Failure]]:
        """(index into records, result or Failure), in the order they finish."""
        ...

    def in_flight(self) -> int:
        """Records handed out whose results have not come back (after an interrupt: those dropped)."""
        ...

    def close(self) -> None:
        ...


def drive(executor: Executor, work: Callable[[T], R], records: Sequence[T],
          handle: Callable[[int, R | Failure], None]) -> int:
    """The one fan-out path: `work` on every record on `executor`, `handle(index, result or Failure)`
    on the driver as each finishes. Returns how many were handled.

    A record that raises or whose worker dies reaches `handle` as a Failure: one bad record never
    stops the run. On Ctrl-C (or SIGHUP, SIGTERM) the executor stops what runs, and Interrupted
    says how many records were handled and how many were in flight.
    """
    handled = 0
    try:
        for index, result in executor.map_unordered(work, records):
            handled += 1  # it finished: an interrupt while it is handled still counts it as kept
            handle(index, result)
    except KeyboardInterrupt as stop:
        if isinstance(stop, Interrupted):
            raise
        raise Interrupted(kept=handled, discarded=executor.in_flight(), at=time.time(),
                          signum=signal_of(stop)) from None
    return handled


def run_one(executor: Executor | None, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """One call on the executor (on a worker for Ray); a Failure is raised as an IssuebenchError."""
    from functools import partial


    if executor is None or executor.name == "local":
        return fn(*args, **kwargs)
    [(_, result)] = list(executor.map_unordered(_Apply(partial(fn, *args, **kwargs)), [None]))
    if isinstance(result, Failure):
        raise IssuebenchError(f"{executor.name} executor: {result.kind}: {result.reason}",
                              hint="rerun; see the Ray logs of the cluster for the worker's side")
    return result


class _Apply:
    """A zero-argument call shaped as a one-record function (picklable, unlike a lambda)."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.call = call

    def __call__(self, _record: object) -> Any:
        return self.call()
