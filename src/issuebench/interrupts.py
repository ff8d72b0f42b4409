"""Ctrl-C during a run: what finished is kept, what was in flight leaves no result behind.

A run's driver (harness.run) owns one `StopFlag` and marks each worker thread with it. Every
place that records a verdict (a result.json, an entry of the shared result cache, a recorded
failed environment build) writes inside `may_record()`: once the driver has stopped the flag,
nothing more is recorded, so a verdict the interrupt caused (a git or uv killed halfway, a test
run cut short) can never be reused by the next run.

SIGHUP (the terminal closed) and SIGTERM (a CI job cancelled, `kill`) stop a run as Ctrl-C does:
`raise_on_stop_signals` makes them raise `StopSignal`, a KeyboardInterrupt, so every clean-up
written for Ctrl-C runs for them too; the exit status is 128 + the signal's number.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

# The signals that stop a command cleanly. SIGINT already raises KeyboardInterrupt in Python.
STOP_SIGNALS = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)


class StopSignal(KeyboardInterrupt):
    """SIGHUP or SIGTERM, raised where Ctrl-C would raise KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def signal_of(exc: BaseException) -> int:
    """The signal that raised this interrupt (SIGINT for a plain KeyboardInterrupt)."""
    return int(getattr(exc, "signum", signal.SIGINT))


def exit_status(exc: BaseException) -> int:
    """What a shell reports for a process the signal stopped: 130 for Ctrl-C, 129 for SIGHUP, 143 for SIGTERM."""
    return 128 + signal_of(exc)


def _raise_stop(signum: int, _frame: object) -> None:
    raise StopSignal(signum)


def raise_on_stop_signals() -> None:
    """From now on SIGHUP and SIGTERM raise StopSignal in the main thread, and stop_arrived()
    tells every thread at once that a stop signal came.

    A signal ignored when the process started stays ignored: `nohup issuebench eval ...` must
    survive its terminal closing."""
    for signum in (signal.SIGHUP, signal.SIGTERM):
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _raise_stop)
    _watch_for_stops()


# Python runs a signal's handler in the main thread only, and only once that thread wakes: a
# signal the kernel gives a worker thread leaves the driver asleep in its wait until some record
# finishes, and that record may be one the same stop cut short (its tests killed by the `kill` of
# every process). The C-level handler writes each signal's number to the wakeup pipe at once, so
# a writer that reads it there knows of the stop before the driver does.
_wakeup_reads: list[int] = []
_stop_seen = threading.Event()
_STOP_NUMBERS = frozenset(int(s) for s in STOP_SIGNALS)


def _watch_for_stops() -> None:
    if _wakeup_reads:
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        os.close(read)
        os.close(write)
        return
    if previous != -1:  # someone else (an event loop) reads signals so: leave them theirs
        signal.set_wakeup_fd(previous)
        os.close(read)
        os.close(write)
        return
    _wakeup_reads.append(read)


def stop_arrived() -> bool:
    """Whether SIGINT, SIGHUP or SIGTERM reached this process (once raise_on_stop_signals ran),
    even if the main thread has not run its handler yet."""
    for fd in _wakeup_reads:
        with contextlib.suppress(BlockingIOError, OSError):
            if _STOP_NUMBERS.intersection(os.read(fd, 4096)):
                _stop_seen.set()
    return _stop_seen.is_set()


@contextlib.contextmanager
def stop_signals_held() -> Iterator[None]:
    """Ignore the stop signals while a clean-up runs: a second Ctrl-C (or the SIGHUP that follows
    a closed terminal's SIGINT) must not cut it short. A no-op off the main thread."""
    previous: dict[int, object] = {}
    try:
        for signum in STOP_SIGNALS:
            previous[signum] = signal.signal(signum, signal.SIG_IGN)
    except ValueError:  # signal.signal works only in the main thread
        pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]


class StopFlag:
    """Set once, by the driver; writers hold its lock while they check it and write."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # a writer may nest (restore, then write)
        self._stopped = False

    def stop(self) -> None:
        # Taking the lock waits for any write in progress: after stop() returns, none is.
        with self._lock:
            self._stopped = True

    @property
    def stopped(self) -> bool:
        return self._stopped

    @contextlib.contextmanager
    def recording(self) -> Iterator[bool]:
        with self._lock:
            yield not self._stopped and not stop_arrived()


_current = threading.local()


@contextlib.contextmanager
def working_for(flag: StopFlag) -> Iterator[None]:
    """Mark the calling (worker) thread as doing a job of the run that owns `flag`."""
    _current.flag = flag
    try:
        yield
    finally:
        _current.flag = None


@contextlib.contextmanager
def may_record() -> Iterator[bool]:
    """Hold while recording a verdict; yields False once this thread's run was interrupted."""
    flag: StopFlag | None = getattr(_current, "flag", None)
    if flag is None:  # not inside a run's worker (a test, a one-off call): always allowed
        yield True
        return
    with flag.recording() as allowed:
        yield allowed


def _parent_of(pid: str) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name sits in parentheses and may hold spaces: the ppid follows the last ')'.
    fields = stat[stat.rfind(")") + 2:].split()
    return int(fields[1]) if len(fields) > 1 else None


def descendants(root: int | None = None) -> list[int]:
    """Every live process below `root` (default: this one), found through /proc (Linux)."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if entry.isdigit():
            parent = _parent_of(entry)
            if parent is not None:
                children.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_descendants() -> int:
    """SIGKILL every process this one started, sandboxes included (they run in their own
    sessions, so a terminal's Ctrl-C never reaches them). Returns how many were signalled."""
    killed = 0
    for pid in descendants():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
    return killed
