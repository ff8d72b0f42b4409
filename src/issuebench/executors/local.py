"""This machine: a pool of threads (the default: the work happens in subprocesses, so threads
suffice and share one environment cache lock) or of processes (for Python-heavy work)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures import Executor as _PoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Literal, TypeVar

from issuebench.executors.base import Failure

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
        pool = self._pool()
        try:
            futures: dict[Future, int] = {pool.submit(fn, record): i for i, record in enumerate(records)}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield futures[future], _outcome(future)
        finally:
            # An interrupted driver does not wait for records nobody will read.
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        pass

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _outcome(future: Future) -> object:
    exc = future.exception()
    if exc is None:
        return future.result()
    if isinstance(exc, BrokenProcessPool):
        return Failure("worker_lost", f"a pool process died: {exc}")
    return Failure("error", f"{type(exc).__name__}: {exc}")
