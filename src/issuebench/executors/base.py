"""What every executor offers: run a function over many records, yield each result as it finishes.

The driver (the process the user started) owns every file a run writes; executors only compute.
A record that cannot be computed comes back as a `Failure`, never as an exception, so one lost
worker or one crashing record never stops a run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

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


class Executor(Protocol):
    """Runs `fn(record)` for every record; `fn` and the records must pickle (they may travel)."""

    name: str
    workers: int

    def map_unordered(self, fn: Callable[[T], R], records: Sequence[T]) -> Iterator[tuple[int, R | Failure]]:
        """(index into records, result or Failure), in the order they finish."""
        ...

    def close(self) -> None:
        ...


def run_one(executor: Executor | None, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """One call on the executor (on a worker for Ray); a Failure is raised as an IssuebenchError."""
    from functools import partial

    from issuebench.errors import IssuebenchError

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
