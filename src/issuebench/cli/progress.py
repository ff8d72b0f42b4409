"""Progress of a step over many items: a live bar on a terminal, one line per finished item off it.

A CI log or `| tee` shows no bar (rich draws nothing there), so a step that only updated a bar was
minutes of silence in a log. `item_progress` gives an `ItemProgress`: `done(text)` as each item
finishes moves the bar on a terminal and prints `[k/N] text` off it; a verb whose per-item lines
are its output anyway (validate's verdicts) calls `advance(text)` and prints its own line,
headed by `counter()`, on both.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)


class ItemProgress:
    def __init__(self, console: Console, total: int | None, bar: Progress | None) -> None:
        self.console, self.total, self.count = console, total, 0
        self._bar = bar
        self._task = bar.add_task("", total=total) if bar is not None else None
        self._lock = threading.Lock()  # items finish in worker threads

    def counter(self) -> str:
        return f"[{self.count}/{self.total if self.total is not None else '?'}]"

    def advance(self, text: str) -> None:
        """One more item finished: the bar moves (on a terminal) and shows `text`."""
        with self._lock:
            self.count += 1
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=1, description=escape(text))

    def done(self, text: str) -> None:
        """One more item finished; off a terminal, its line."""
        self.advance(text)
        if self._bar is None:
            self.console.print(f"{self.counter()} {text}", highlight=False, markup=False, soft_wrap=True)
            sys.stdout.flush()


@contextlib.contextmanager
def item_progress(console: Console, label: str, total: int | None) -> Iterator[ItemProgress]:
    """`label`: what the bar says (validate, agent, ...); `total`: the items (None: not known)."""
    if not console.is_terminal:
        yield ItemProgress(console, total, None)
        return
    bar = Progress(SpinnerColumn(), TextColumn(f"[bold]{escape(label)}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("{task.description}"), console=console, transient=True)
    bar.start()
    try:
        yield ItemProgress(console, total, bar)
    finally:
        # A closed terminal (SIGHUP) fails the bar's last refresh: that must not hide the interrupt.
        with contextlib.suppress(OSError):
            bar.stop()
