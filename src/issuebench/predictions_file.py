"""The predictions file a run writes as it goes (DIR/preds.jsonl of `agent` and `infer`).

Rows are appended as instances end, so a killed run keeps what finished. It holds one row per
instance id whatever the reruns: before a run, the rows of the instances it is about to run again
are taken out (`eval` refuses a file with an id twice, and a cost summed over rows would count the
instance twice).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from issuebench.files import write_text_atomic


class PredictionsFile:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def ids(self) -> set[str]:
        """The instances with a whole row (a line cut by a kill counts as none: it runs again)."""
        return {row["instance_id"] for row in self._rows()}

    def make_room(self, rerun: Iterable[str]) -> None:
        """Before a run: drop the rows of the instances it runs again, and lines a kill cut short."""
        if not self.path.is_file():
            return
        again = set(rerun)
        kept = [line for line, row in self._lines() if row is not None and row["instance_id"] not in again]
        text = "".join(line + "\n" for line in kept)
        if text != self.path.read_text(encoding="utf-8"):
            write_text_atomic(self.path, text)

    def append(self, row: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(row, ensure_ascii=False) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)

    def _rows(self) -> list[dict[str, Any]]:
        return [row for _line, row in self._lines() if row is not None]

    def _lines(self) -> list[tuple[str, dict[str, Any] | None]]:
        if not self.path.is_file():
            return []
        out: list[tuple[str, dict[str, Any] | None]] = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                row = None
            whole = isinstance(row, dict) and isinstance(row.get("instance_id"), str)
            out.append((line, row if whole else None))
        return out
