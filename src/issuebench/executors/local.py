"""This machine: a pool of threads (the default: the work happens in subprocesses, so threads
suffice and share one environment cache lock) or of processes (for Python-heavy work)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures import Executor as _PoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Literal, TypeVar

from issuebench.executors.base import Failure
from issuebench.interrupts import StopFlag, kill_descendants, stop_signals_held, working_for

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


class LocalExecutor:
    name = "local"

    def __init__(self, workers: int | None = None, kind: Literal["thread", "process"] = "thread") -> None:
        self.workers = workers or default_workers()
        self.kind = kind

    def _pool(self) -> _PoolExecutor:
        if self.kind == "process":
            return ProcessPoolExecutor(max_workers=self.workers)
        return ThreadPoolExecutor(max_workers=self.workers)

    def map_unordered(self, fn: Callable[[T], R], records: Sequence[T]) -> Iterator[tuple[int, R | Failure]]:
        """Results as they finish. At most `workers` records are out at a time, and the next is
        drawn only once the driver has handled the result that freed its slot, as on Ray (so a
        Gate's stop sees every finished record). Stopped before the end (Ctrl-C, or the driver
        leaving the loop), nothing more is recorded by the records in flight
        (interrupts.may_record), those not drawn never start, and the processes of those running
        are killed until every one has returned."""
        flag = StopFlag()
        pool = self._pool()
        work = fn if self.kind == "process" else partial(_marked, flag, fn)
        todo = iter(enumerate(records))
        futures: dict[Future, int] = {}

        def submit() -> None:
            for index, record in todo:
                futures[pool.submit(work, record)] = index
                if len(futures) >= self.workers:
                    return

        self._pending: set[Future] | dict[Future, int] = futures
        try:
            submit()
            while futures:
                done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
                stop = next((f.exception() for f in done if isinstance(f.exception(), KeyboardInterrupt)), None)
                if stop is not None:
                    # A record's work saw the run stopped (its sandbox stopped from outside): the
                    # driver stops as if the signal had reached it; that record counts as in flight.
                    raise stop
                finished = [(futures.pop(future), future) for future in done]
                for index, future in finished:
                    yield index, _outcome(future)
                submit()
        finally:
            if futures:
                with stop_signals_held():  # a second Ctrl-C must not cut the clean-up short
                    self._stop(pool, flag, set(futures))
            pool.shutdown(wait=True, cancel_futures=True)

    def _stop(self, pool: _PoolExecutor, flag: StopFlag, pending: set[Future]) -> None:
        flag.stop()
        running = [f for f in pending if not f.cancel()]
        self._pending = set(running)
        # A record's thread may start its next step (a git, a uv, a sandbox) after a kill: keep
        # killing until every one has returned. Each step fails at once when its process dies.
        while running and self.kind == "thread":
            kill_descendants()
            if not wait(running, timeout=0.2).not_done:
                break

    def in_flight(self) -> int:
        return len(getattr(self, "_pending", ()))

    def close(self) -> None:
        pass

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _marked(flag: StopFlag, fn: Callable[[T], R], record: T) -> R:
    with working_for(flag):
        return fn(record)


def _outcome(future: Future) -> object:
    exc = future.exception()
    if exc is None:
        return future.result()
    if isinstance(exc, BrokenProcessPool):
        return Failure("worker_lost", f"a pool process died: {exc}")
    return Failure("error", f"{type(exc).__name__}: {exc}")
