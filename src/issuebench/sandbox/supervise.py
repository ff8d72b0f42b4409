"""Run one command under limits, read its output ourselves, and classify how it ended.

Shared by the bubblewrap sandbox and the unsandboxed runner. Reading the pipe here (rather than
letting the child write a file) is what bounds the output: at most `max_output_bytes` are kept,
the start of the output and its end (what a runner prints last, its summary, is what the parsers
read: pytest's `-rA` prints every passing test's captured log before it, and python-multipart's
run 20 MB of them), the middle cut and said; a run that prints OUTPUT_STOP_FACTOR times the limit
is stopped, so a test printing forever cannot fill the disk or hold the run until its timeout.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from issuebench.interrupts import STOP_SIGNALS, StopSignal
from issuebench.sandbox import _launch
from issuebench.sandbox.bwrap_status import StatusPipe, parse_bwrap_status
from issuebench.sandbox.cgroups import RunCgroup
from issuebench.sandbox.types import (
    FILE_LIMIT,
    MEMORY_LIMIT,
    OK,
    OUTPUT_LIMIT,
    PROCESS_LIMIT,
    SANDBOX_FAILED,
    TIMEOUT,
    Limits,
    RunResult,
)

LAUNCHER = str(Path(_launch.__file__).resolve())
CHUNK = 65536
POLL_INTERVAL = 0.1
# After the main process exits, how long to keep reading from children that still hold the pipe.
DRAIN_GRACE = 2.0
MiB = 1024 * 1024
OUTPUT_STOP_FACTOR = 10


@dataclass
class _State:
    killed_for: str | None = None
    output_bytes: int = 0
    chunks: list[bytes] = field(default_factory=list)     # the output's start, up to its share
    tail: collections.deque[bytes] = field(default_factory=collections.deque)   # its latest bytes
    tail_bytes: int = 0
    status_text: str = ""
    child_pid: int | None = None
    oom_kills: int = 0
    fork_refusals: int = 0
    peak_mb: float | None = None


_PRLIMIT = shutil.which("prlimit")
_SH = shutil.which("sh")
_SETPRIV = shutil.which("setpriv")


def launcher_argv(cgroup_procs: Sequence[str], rlimits: Mapping[str, int], argv: Sequence[str]) -> list[str]:
    """The command that joins the run's cgroups, sets its rlimits, then execs argv.

    It dies with this process from its first instant: the parent-death signal is set before
    anything else runs, and a launcher whose parent is already gone stops there. bwrap's own
    --die-with-parent comes later, once bwrap runs; a harness killed (SIGKILL) between the fork
    and that moment used to leave a sandbox running with no one to hold it to its time limit.

    A POSIX shell plus util-linux's prlimit (and setpriv) start in about a millisecond, where a
    Python launcher takes tens; without them the Python launcher (_launch.py) does the same job.
    """
    parent = os.getpid()
    if _PRLIMIT is None or _SH is None:
        spec = json.dumps({"cgroups": list(cgroup_procs), "rlimits": dict(rlimits), "parent": parent})
        return [sys.executable, "-I", "-S", LAUNCHER, spec, *argv]
    fail = f'{{ echo "{_launch.TAG} cannot join the run\'s cgroup" >&2; exit {_launch.LAUNCH_FAILED}; }}'
    lines = [f'[ "$PPID" = {parent} ] || exit {_launch.LAUNCH_FAILED}'] if _SETPRIV else []
    lines += [f"echo $$ > {shlex.quote(path)} || {fail}" for path in cgroup_procs]
    options = " ".join(f"--{name.lower()}={value}:{value}" for name, value in rlimits.items())
    lines.append(f'exec {shlex.quote(_PRLIMIT)} {options} -- "$@"')
    shell = [_SH, "-c", "\n".join(lines), "issuebench-launch", *argv]
    return [_SETPRIV, "--pdeathsig", "KILL", "--", *shell] if _SETPRIV else shell


def rlimits_for(limits: Limits, group: RunCgroup) -> tuple[dict[str, int], list[str]]:
    rl: dict[str, int] = {"CORE": 0}  # no core files dropped into the workspace
    how: list[str] = []
    if limits.max_file_mb is not None:
        rl["FSIZE"] = limits.max_file_mb * MiB
        how.append("fsize=rlimit")
    if limits.memory_mb is not None:
        if group.memory is not None:
            how.append("memory=cgroup")
        else:
            rl["AS"] = limits.memory_mb * MiB
            how.append("memory=rlimit(address space)")
    if limits.max_procs is not None:
        if group.pids is not None:
            how.append("procs=cgroup")
        elif os.geteuid() != 0:
            rl["NPROC"] = limits.max_procs
            how.append("procs=rlimit(per user)")
        else:
            how.append("procs=none(root is exempt from RLIMIT_NPROC and no pids cgroup is writable)")
    return rl, how


def _kill_tree(proc: subprocess.Popen[bytes], state: _State, group: RunCgroup) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if state.child_pid:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(state.child_pid, signal.SIGKILL)
    group.kill_all(deadline=2.0)


def supervise(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], limits: Limits,
              output_path: Path | None, sandbox_name: str, status_fd: bool = False) -> RunResult:
    """Run argv (already wrapped by the sandbox, if any) and return how it ended.

    With status_fd, argv must contain the placeholder "{STATUS_FD}" where bwrap's
    --json-status-fd number goes; the JSON tells us whether the sandbox really started.

    In phases: the limits (a cgroup where one is writable, rlimits otherwise) -> the start ->
    the output read and the limits enforced (_Pump) -> the clean-up (every process killed, the
    cgroup's counters read, then it goes) -> how the run ended (_classify).
    """
    start = time.monotonic()
    group = RunCgroup.create(limits.max_procs, limits.memory_mb)
    rlimits, how = rlimits_for(limits, group)
    notes = list(group.notes)
    state = _State()
    pipe = StatusPipe.open() if status_fd else StatusPipe()
    argv = pipe.placed(list(argv))
    out_file: IO[bytes] | None = None
    proc: subprocess.Popen[bytes] | None = None
    try:
        if output_path is not None:
            output_path.parent.mkdir(parents=True, exist_ok=True)
            out_file = open(output_path, "wb")  # noqa: SIM115 - closed in finally
        try:
            proc = subprocess.Popen(
                launcher_argv(group.procs_files, rlimits, argv), cwd=cwd, env=dict(env),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True, pass_fds=(pipe.write,) if pipe.write is not None else ())
        except OSError as exc:
            return RunResult(None, "", SANDBOX_FAILED, f"could not start {argv[0]}: {exc}",
                             time.monotonic() - start, " ".join(how), 0, sandbox_name, notes)
        pipe.close_write()
        _Pump(proc, state, group, limits, out_file, pipe.read, start).run()
    finally:
        _clean_up(proc, state, group, notes)
        if out_file is not None:
            out_file.close()
        pipe.close()
    assert proc is not None
    _raise_if_stopped_from_outside(proc.returncode, state, status_fd)
    return _result(proc, state, group, limits, status_fd, time.monotonic() - start, how, sandbox_name, notes)


def _raise_if_stopped_from_outside(rc: int | None, state: _State, status_fd: bool) -> None:
    """bubblewrap itself ended by SIGTERM, SIGHUP or SIGINT that the run did not send: someone
    stopped the run from outside (a `kill` of every process, a cancelled job). The code inside
    cannot signal bwrap (it sits outside the sandbox's process namespace), so this is never the
    code under test's doing; and how the run ended says nothing of the patch. Raising StopSignal
    stops the run as that signal stops the driver, so no verdict is written for it."""
    if not status_fd or rc is None or state.killed_for is not None or state.oom_kills:
        return
    if -rc in STOP_SIGNALS:
        raise StopSignal(-rc)


def _clean_up(proc: subprocess.Popen[bytes] | None, state: _State, group: RunCgroup, notes: list[str]) -> None:
    """Every process of the run killed; the cgroup's counters read before it goes away."""
    if proc is not None and proc.poll() is None:
        _kill_tree(proc, state, group)
        proc.wait()
    state.oom_kills = group.oom_kills()
    state.fork_refusals = group.pids_limit_hits()
    state.peak_mb = group.peak_memory_mb()
    notes.extend(group.destroy())


def _result(proc: subprocess.Popen[bytes], state: _State, group: RunCgroup, limits: Limits, status_fd: bool,
            duration: float, how: list[str], sandbox_name: str, notes: list[str]) -> RunResult:
    output = b"".join(state.chunks).decode("utf-8", errors="replace")
    status, reason = _classify(proc.returncode, output, state, group, limits, status_fd)
    returncode = None if state.killed_for else proc.returncode
    if status_fd:
        for record in parse_bwrap_status(state.status_text):
            if "exit-code" in record and not state.killed_for:
                returncode = int(record["exit-code"])  # type: ignore[call-overload]
    if state.peak_mb is not None:
        notes.append(f"peak memory {state.peak_mb:.0f} MiB")
    if state.tail and state.killed_for != OUTPUT_LIMIT:
        notes.append(f"the run printed {state.output_bytes} bytes: its start and its last "
                     f"{limits.max_output_bytes // 4} kept, the middle cut")
    return RunResult(returncode, output, status, reason, duration, " ".join(how),
                     state.output_bytes, sandbox_name, notes)


class _Pump:
    """Read the run's output (and bwrap's status) until it ends, enforcing the time, process and
    output limits; after the main process exits, children still holding the pipe get DRAIN_GRACE."""

    def __init__(self, proc: subprocess.Popen[bytes], state: _State, group: RunCgroup, limits: Limits,
                 out_file: IO[bytes] | None, status_r: int | None, start: float) -> None:
        assert proc.stdout is not None
        self.proc, self.state, self.group, self.limits, self.out_file = proc, state, group, limits, out_file
        self.sel = selectors.DefaultSelector()
        self.sel.register(proc.stdout.fileno(), selectors.EVENT_READ, "out")
        if status_r is not None:
            self.sel.register(status_r, selectors.EVENT_READ, "status")
        self.open_fds = 2 if status_r is not None else 1
        self.deadline = start + limits.timeout
        self.drain_until: float | None = None

    def run(self) -> None:
        state = self.state
        try:
            while True:
                now = time.monotonic()
                if self._over(now):
                    break
                self._enforce(now)
                wait = POLL_INTERVAL if state.killed_for is None else 0.05
                if not self.open_fds:  # the command closed its output but may still be running
                    # Wait on the process itself, not a fixed sleep: most runs end right after their
                    # output closes, and a sleep here was most of the sandbox's overhead.
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.proc.wait(timeout=wait)
                    continue
                self._read(wait)
            if state.killed_for is not None:
                self.proc.wait()
        finally:
            self.sel.close()
            ending = _cut_and_tail(state, self.limits)
            if state.killed_for == OUTPUT_LIMIT:
                ending += (f"\n[issuebench: output over {self.limits.max_output_bytes * OUTPUT_STOP_FACTOR} "
                           "bytes; the run was stopped]\n").encode()
            if ending:
                state.chunks.append(ending)
                if self.out_file is not None:
                    self.out_file.write(ending)

    def _over(self, now: float) -> bool:
        if self.drain_until is None and self.proc.poll() is not None:
            self.drain_until = now + DRAIN_GRACE
        return self.drain_until is not None and (self.open_fds == 0 or now > self.drain_until)

    def _enforce(self, now: float) -> None:
        state = self.state
        if state.killed_for is not None:
            return
        if now > self.deadline:
            state.killed_for = TIMEOUT
        elif self.group.pids_limit_hits() > 0:
            state.killed_for = PROCESS_LIMIT
        if state.killed_for:
            _kill_tree(self.proc, state, self.group)

    def _read(self, wait: float) -> None:
        state = self.state
        for key, _ in self.sel.select(timeout=wait):
            try:
                data = os.read(key.fd, CHUNK)
            except OSError:
                data = b""
            if not data:
                self.sel.unregister(key.fd)
                self.open_fds -= 1
                continue
            if key.data == "status":
                state.status_text += data.decode("utf-8", errors="replace")
                if state.child_pid is None:
                    for record in parse_bwrap_status(state.status_text):
                        if "child-pid" in record:
                            state.child_pid = int(record["child-pid"])  # type: ignore[call-overload]
                continue
            _take_output(data, state, self.limits, self.out_file)
            if state.killed_for is None and \
                    state.output_bytes > self.limits.max_output_bytes * OUTPUT_STOP_FACTOR:
                state.killed_for = OUTPUT_LIMIT
                _kill_tree(self.proc, state, self.group)


def _take_output(data: bytes, state: _State, limits: Limits, out_file: IO[bytes] | None) -> None:
    """The start of the output is kept (and written) as it comes, up to three quarters of the
    limit; after that only the latest quarter, written when the run ends."""
    tail_share = limits.max_output_bytes // 4
    room = limits.max_output_bytes - tail_share - state.output_bytes
    state.output_bytes += len(data)
    if room > 0:
        kept, data = data[:room], data[room:]
        state.chunks.append(kept)
        if out_file is not None:
            out_file.write(kept)
            out_file.flush()
    if not data:
        return
    state.tail.append(data)
    state.tail_bytes += len(data)
    while state.tail and state.tail_bytes - len(state.tail[0]) >= tail_share:
        state.tail_bytes -= len(state.tail.popleft())


def _cut_and_tail(state: _State, limits: Limits) -> bytes:
    """What follows the kept start: the cut, said with its size, then the output's last bytes."""
    if not state.tail:
        return b""
    tail = b"".join(state.tail)[-(limits.max_output_bytes // 4):]
    skipped = state.output_bytes - sum(len(c) for c in state.chunks) - len(tail)
    cut = f"\n[issuebench: {skipped} bytes of output cut here; its start and its end are kept]\n"
    return (cut.encode() if skipped > 0 else b"") + tail


_FSIZE_SIGNAL = int(signal.SIGXFSZ)
_MEMORY_WORDS = re.compile(r"MemoryError|Cannot allocate memory|std::bad_alloc|[Oo]ut of memory")
_FORK_WORDS = re.compile(r"(fork|BlockingIOError).*Resource temporarily unavailable|"
                         r"Resource temporarily unavailable.*fork|can't start new thread")


def _classify(rc: int | None, output: str, state: _State, group: RunCgroup, limits: Limits,
              bwrap: bool) -> tuple[str, str]:
    if state.killed_for == OUTPUT_LIMIT:
        return OUTPUT_LIMIT, (
            f"the run printed more than {limits.max_output_bytes} bytes; the output was cut there and "
            "every process stopped (a test printing in a loop?); raise max_output_bytes if it is real")
    if state.killed_for == TIMEOUT:
        return TIMEOUT, (
            f"the run took longer than {limits.timeout:g}s and was stopped with every process it "
            "started (including detached ones); raise --timeout if the tests are only slow")
    oom = state.oom_kills
    if oom:
        return MEMORY_LIMIT, (
            f"the run used more than {limits.memory_mb} MiB: the kernel killed {oom} process(es) for "
            "memory; raise the memory limit if the tests need that much")
    hits = state.fork_refusals
    if state.killed_for == PROCESS_LIMIT or hits:
        return PROCESS_LIMIT, (
            f"the run tried to exceed {limits.max_procs} processes/threads at once ({hits} forks "
            "refused) and was stopped (a fork bomb?); if the tests need more, set max_procs in the recipe")
    if bwrap and '"exit-code"' not in state.status_text:
        lines = [ln for ln in output.splitlines() if ln.startswith("bwrap:")]
        detail = lines[-1] if lines else (output.strip().splitlines() or ["no message"])[-1]
        return SANDBOX_FAILED, (
            f"bubblewrap could not set up the sandbox ({detail}); check that every bind path "
            "exists and that user namespaces are enabled, or pass --no-sandbox")
    if rc == _launch.LAUNCH_FAILED and output.startswith(_launch.TAG):
        return SANDBOX_FAILED, output.strip().splitlines()[0]
    if rc is not None and rc != 0:
        if limits.max_file_mb is not None and (
                rc in (-_FSIZE_SIGNAL, 128 + _FSIZE_SIGNAL) or "File too large" in output):
            return FILE_LIMIT, (
                f"a process tried to write a file larger than {limits.max_file_mb} MiB and was "
                "refused (RLIMIT_FSIZE); raise max_file_mb if the tests really write such files")
        if group.memory is None and limits.memory_mb is not None and _MEMORY_WORDS.search(output):
            return MEMORY_LIMIT, (
                f"the run ran out of its {limits.memory_mb} MiB address space (RLIMIT_AS; no memory "
                "cgroup here); raise the memory limit if the tests need that much")
        if group.pids is None and limits.max_procs is not None and _FORK_WORDS.search(output):
            return PROCESS_LIMIT, (
                f"the run could not start more processes (limit {limits.max_procs}, RLIMIT_NPROC); "
                "if the tests need more, set max_procs in the recipe")
    return OK, "" if rc == 0 else f"the command exited with status {rc}"
