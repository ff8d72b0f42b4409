"""Records drawn one at a time, until the driver says stop: how agent keeps its total cost limit
on a remote executor and synth its --max-tasks on any.

Both executors draw their next record only when a slot frees, after the driver has handled the
result that freed it, so `stop()` sees every finished record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class Gate(Sequence[T]):
    def __init__(self, records: Sequence[T], stop: Callable[[], bool]) -> None:
        self.records, self.stop = records, stop
        self.drawn = 0  # records[:drawn] were handed to the executor, the rest never were

    def __len__(self) -> int:
        return len(self.records)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        return self.records[index]

    def __iter__(self) -> Iterator[T]:
        for record in self.records:
            if self.stop():
                return
            self.drawn += 1
            yield record
