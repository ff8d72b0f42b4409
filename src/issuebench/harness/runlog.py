"""run_instance.log: a timestamped line per step, written as it happens."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TextIO


class InstanceLog:
    def __init__(self, path: Path | None) -> None:
        self._fh: TextIO | None = path.open("a", encoding="utf-8") if path else None
        self._start = time.monotonic()

    def info(self, message: str) -> None:
        if self._fh is None:
            return
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        self._fh.write(f"{stamp} [+{time.monotonic() - self._start:7.2f}s] {message}\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    @classmethod
    def append(cls, path: Path, message: str) -> None:
        """One line at the end of an existing log (a reused result says so in its own folder)."""
        log = cls(path)
        log.info(message)
        log.close()
