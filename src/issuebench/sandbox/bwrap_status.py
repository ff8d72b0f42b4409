"""bubblewrap's --json-status-fd: the pipe it writes to, and the JSON records it writes there
(among them the sandboxed command's exit code, which says the sandbox really started)."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass


def parse_bwrap_status(text: str) -> list[dict[str, object]]:
    decoder = json.JSONDecoder()
    out: list[dict[str, object]] = []
    idx = 0
    text = text.strip()
    while idx < len(text):
        try:
            obj, end = decoder.raw_decode(text, idx)
        except json.JSONDecodeError:
            break
        if isinstance(obj, dict):
            out.append(obj)
        idx = end
        while idx < len(text) and text[idx].isspace():
            idx += 1
    return out


@dataclass
class StatusPipe:
    """bwrap's --json-status-fd: the child writes, we read (both ends None without bwrap)."""

    read: int | None = None
    write: int | None = None

    @classmethod
    def open(cls) -> StatusPipe:
        return cls(*os.pipe())

    def placed(self, argv: list[str]) -> list[str]:
        return argv if self.write is None else [str(self.write) if a == "{STATUS_FD}" else a for a in argv]

    def close_write(self) -> None:
        """Once the child holds it: the read end then sees the end of the file when bwrap exits."""
        if self.write is not None:
            os.close(self.write)
            self.write = None

    def close(self) -> None:
        for fd in (self.read, self.write):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
