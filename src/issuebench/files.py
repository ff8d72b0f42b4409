"""Files written whole or not at all: a killed process never leaves half of one."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a killed run never leaves half a file.

    The file gets the mode open() would give it (0666 less the umask), as the run's logs do:
    mkstemp's 0600 would make a run's results unreadable to anyone else who may read its logs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=4, ensure_ascii=False) + "\n")
