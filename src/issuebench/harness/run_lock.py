"""One process at a time per run folder: a second eval of the same run id stops at once.

Two evals writing one `logs/run_evaluation/<run_id>/` would both run every instance and write
over each other's folders and logs. The run holds an flock on `<run folder>/.lock` (hidden, so
readers of run folders skip it), which names the holder's pid for the one that is refused. The
kernel drops an flock when its process exits or crashes, so a dead run never blocks the next.
The holder removes the file when it is done, and the folders it created for it when they stayed
empty (a command that stopped before its run started leaves nothing behind).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from issuebench.errors import IssuebenchError
from issuebench.harness.artifacts import RunLayout

LOCK_FILE = ".lock"

# Run folders this process holds, with how many callers hold each: eval's command takes the lock
# before run_evaluation takes it again, and one process's second flock on a second open file of
# the same path would be refused.
_held: dict[Path, int] = {}
_held_lock = threading.Lock()


class RunLocked(IssuebenchError):
    """Another process is evaluating this run."""


@contextlib.contextmanager
def run_locked(layout: RunLayout) -> Iterator[None]:
    """Hold the run folder's lock; raise RunLocked at once when another process holds it."""
    run_dir = Path(os.path.abspath(layout.run_dir()))
    with _held_lock:
        taken = None if run_dir in _held else _acquire(layout, run_dir)
        _held[run_dir] = _held.get(run_dir, 0) + 1
    try:
        yield
    finally:
        with _held_lock:
            _held[run_dir] -= 1
            if not _held[run_dir]:
                del _held[run_dir]
        if taken is not None:
            _release(run_dir, *taken)


def _acquire(layout: RunLayout, run_dir: Path) -> tuple[int, list[Path]]:
    """The locked file's descriptor, and the folders made for it (outermost first)."""
    made = [p for p in (*reversed(run_dir.parents[:3]), run_dir) if not p.exists()]
    path = run_dir / LOCK_FILE
    while True:
        run_dir.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by subprocesses (PEP 446)
        except FileNotFoundError:  # the last holder removed the folder just now
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise RunLocked(f"run {layout.run_id} ({run_dir}) is being evaluated by another process: {holder}",
                            hint="wait for it to end (or stop it), or pass another --run-id") from None
        if _same_file(fd, path):
            break
        os.close(fd)  # the holder before us removed the file after we opened it: lock the new one
    os.ftruncate(fd, 0)
    os.write(fd, f"pid {os.getpid()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}: {_command()}\n".encode())
    return fd, made


def _release(run_dir: Path, fd: int, made: list[Path]) -> None:
    with contextlib.suppress(OSError):
        (run_dir / LOCK_FILE).unlink()  # while still held: no one can lock this file after us
    os.close(fd)
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:  # not empty: the run wrote there
            break


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", errors="replace").strip()
    except OSError:
        text = ""
    return text or "a process that has not said its pid yet"


def _command() -> str:
    """`issuebench eval ...`, however it was started (the script, python -m issuebench, a caller's own)."""
    program = sys.argv[0] if sys.argv else "python"
    line = " ".join(["issuebench" if "issuebench" in program else Path(program).name, *sys.argv[1:]])
    return line if len(line) <= 200 else line[:197] + "..."
