"""A warm pytest worker per workbench: one long-lived sandboxed process, a fork per test run.

A covering run of a few tests is mostly fixed cost: the sandbox, the interpreter, importing
pytest and its plugins. The worker pays that once. It runs in the same bubblewrap sandbox as a
plain run (same binds, environment, no network, the same per-run cgroups and rlimits, now
spanning the worker's life) and imports pytest but never the project; for each run it forks a
child that calls `pytest.main` with the run's arguments, so the child imports the project as the
files are now, and prints what the test command would print (`data/issuebench_warm.py`).

The host keeps the deadline: a run that outlives it kills the whole worker (every process of
its cgroups, as a plain run's timeout does) and the next run starts a fresh one. When the worker
cannot serve a run (it will not start, it imported a project module while warming up, it died
under a run for no limit's reason) the caller runs that one the plain way, so the plain path
stays the reference and the verdicts are the same.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from issuebench.config import TESTBED_PATH
from issuebench.sandbox import (
    DEFAULT_PATH,
    FILE_LIMIT,
    MEMORY_LIMIT,
    OK,
    OUTPUT_LIMIT,
    PROCESS_LIMIT,
    TIMEOUT,
    Bind,
    Limits,
    RunCgroup,
    RunResult,
    build_argv,
    launcher_argv,
)
from issuebench.sandbox import parse_bwrap_status as parse_bwrap_status
from issuebench.sandbox import rlimits_for as rlimits_for

SERVER = Path(__file__).parent / "data" / "issuebench_warm.py"
START_TIMEOUT = 120.0      # importing pytest on a loaded machine
HEADER_LIMIT = 65536       # a reply's header line is a few dozen bytes; more is garbage
_FSIZE_SIGNAL = int(signal.SIGXFSZ)


class WorkerGone(Exception):
    """The worker closed its output or answered garbage: run this one the plain way."""


class Deadline(Exception):
    pass


def pytest_mode(argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """How a test command starts pytest ('script' or 'module') and pytest's own arguments.

    None for anything else (another runner, a wrapper, environment assignments): those run the
    plain way.
    """
    argv = list(argv)
    if argv[:1] in (["pytest"], ["py.test"]):
        return "script", argv[1:]
    if len(argv) >= 3 and argv[0] in ("python", "python3") and argv[1:3] == ["-m", "pytest"]:
        return "module", argv[3:]
    return None


class WarmWorker:
    """One sandboxed pytest worker over a workspace; `run` never raises for what a run does."""

    def __init__(self, workspace: Path, python: Path, *, binds: Sequence[Bind], env: Mapping[str, str],
                 limits: Limits | None = None) -> None:
        self.workspace = Path(workspace).resolve()
        self.python = str(python)
        self.binds = list(binds)
        self.env = dict(env)
        self.limits = limits or Limits()
        self.disabled = ""         # why the worker is not used (set once, for good)
        # Whether the worker imports what its children imported from outside the project, so
        # later children start with it; off for good once that brought in the project or a thread.
        self.learn = True
        self.starts = 0            # workers started, for tests and the benchmark
        self._proc: subprocess.Popen[bytes] | None = None
        self._group: RunCgroup | None = None
        self._status_r: int | None = None
        self._child_pid: int | None = None
        self._buf = b""
        self._stderr = None

    # -- life cycle ---------------------------------------------------------------------------

    def _start(self) -> bool:
        self.starts += 1
        group = RunCgroup.create(self.limits.max_procs, self.limits.memory_mb)
        rlimits, _how = rlimits_for(self.limits, group)
        status_r, status_w = os.pipe()
        # Started by bash as the plain run's test command is, so the environment bash adds (PWD,
        # SHLVL) is the same; bash then gives its process to the worker.
        command = ["bash", "-c", 'exec "$0" -c "$1"', self.python, SERVER.read_text()]
        argv = build_argv(command, workspace=self.workspace, binds=self.binds,
                          env=self.env, limits=self.limits, network=False, cwd=TESTBED_PATH)
        argv = [str(status_w) if a == "{STATUS_FD}" else a for a in argv]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker; closed in _stop
        self._group, self._status_r, self._buf, self._child_pid = group, status_r, b"", None
        try:
            self._proc = subprocess.Popen(
                launcher_argv(group.procs_files, rlimits, argv), cwd=self.workspace,
                env={"PATH": os.environ.get("PATH", DEFAULT_PATH)}, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=self._stderr, start_new_session=True, pass_fds=(status_w,))
        except OSError as exc:
            self._stop()
            self.disabled = f"could not start the warm worker: {exc}"
            return False
        finally:
            os.close(status_w)
        try:
            ready = json.loads(self._line(time.monotonic() + START_TIMEOUT))
        except (Deadline, WorkerGone, ValueError):
            ready = {}
        with contextlib.suppress(OSError, BlockingIOError):
            os.set_blocking(status_r, False)
            for record in parse_bwrap_status(os.read(status_r, 65536).decode(errors="replace")):
                if "child-pid" in record:
                    self._child_pid = int(record["child-pid"])  # type: ignore[call-overload]
        problem = ""
        if not ready.get("ready"):
            problem = f"the warm worker did not start: {self._stderr_tail()}"
        elif ready.get("tainted"):
            # A module of the project came in with pytest's imports: children would see it as it
            # was when the worker started, not as the candidate left it.
            problem = f"importing pytest imports the project ({', '.join(ready['tainted'][:3])})"
        elif ready.get("threads", 1) != 1:
            problem = "a pytest plugin starts threads at import; forking would not be safe"
        if problem:
            self._stop()
            self.disabled = problem
            return False
        return True

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.seek(0)
            return self._stderr.read()[-300:].decode(errors="replace").strip() or "no message"
        return "no message"

    def _stop(self) -> None:
        """Kill the worker and every process it started; remove its cgroups."""
        proc, group = self._proc, self._group
        self._proc = self._group = None
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            if self._child_pid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self._child_pid, signal.SIGKILL)
        if group is not None:
            group.destroy()
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.wait(timeout=10)
            for stream in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    stream.close()  # type: ignore[union-attr]
        if self._status_r is not None:
            with contextlib.suppress(OSError):
                os.close(self._status_r)
            self._status_r = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def close(self) -> None:
        self._stop()

    # -- protocol -----------------------------------------------------------------------------

    def _fill(self, deadline: float) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Deadline
                if sel.select(timeout=min(left, 0.5)):
                    break
        data = os.read(fd, 1 << 20)
        if not data:
            raise WorkerGone("the worker closed its output")
        self._buf += data

    def _line(self, deadline: float) -> bytes:
        while b"\n" not in self._buf:
            if len(self._buf) > HEADER_LIMIT:
                raise WorkerGone("the worker's reply has no header")
            self._fill(deadline)
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    def _exact(self, size: int, deadline: float) -> bytes:
        while len(self._buf) < size:
            self._fill(deadline)
        data, self._buf = self._buf[:size], self._buf[size:]
        return data

    # -- a run --------------------------------------------------------------------------------

    def run(self, mode: str, args: Sequence[str], *, timeout: float) -> RunResult | None:
        """Run pytest with args in a fresh child; None: the worker cannot, run it the plain way.

        In phases: a worker (started when none is alive) -> the request and its reply within the
        deadline -> the limits the run hit, from the cgroup's counters -> the result, as the plain
        run would report it."""
        if self.disabled or not self._alive():
            return None
        assert self._group is not None
        group = self._group
        oom, forks = group.oom_kills(), group.pids_limit_hits()
        started = time.monotonic()
        try:
            header, output = self._exchange(mode, args, started + timeout)
        except Deadline:
            self._stop()
            return RunResult(None, "", TIMEOUT, f"the run took longer than {timeout:g}s and was stopped with "
                             "every process it started; raise --timeout if the tests are only slow",
                             time.monotonic() - started, sandbox="bwrap-warm")
        except (WorkerGone, OSError, ValueError, KeyError, TypeError):
            # Killed for memory or processes: that is the run's result. Anything else: plain run.
            limited = self._limit_hit(group, oom, forks, timeout, started)
            self._stop()
            return limited
        seconds = time.monotonic() - started
        limited = self._limit_hit(group, oom, forks, timeout, started)
        if limited is not None:
            self._stop()  # the counters are the worker's, not the run's: start clean
            return limited
        if header.get("clean") is False:
            self.learn = False
            self._stop()  # its next child would not start as a fresh interpreter: replace it
        return self._result(header, output, seconds)

    def _alive(self) -> bool:
        """A worker ready for a run: the one running, or a fresh one (False: none would start)."""
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            return self._start()
        return True

    def _exchange(self, mode: str, args: Sequence[str], deadline: float) -> tuple[dict, str]:
        """Send one run's request; its reply's header and output (raises Deadline, WorkerGone)."""
        assert self._proc is not None and self._proc.stdin is not None
        request = {"mode": mode, "args": list(args), "max_bytes": self.limits.max_output_bytes,
                   "learn": self.learn}
        self._proc.stdin.write(json.dumps(request).encode() + b"\n")
        self._proc.stdin.flush()
        header = json.loads(self._line(deadline))
        size = int(header["bytes"])
        if size < 0 or size > self.limits.max_output_bytes:
            raise WorkerGone(f"the worker announced {size} bytes")
        return header, self._exact(size, deadline).decode("utf-8", errors="replace")

    def _result(self, header: dict, output: str, seconds: float) -> RunResult:
        size = int(header["bytes"])
        rc = int(header.get("rc", 1))
        if header.get("output_cut"):
            return RunResult(None, output, OUTPUT_LIMIT, f"the run printed more than "
                             f"{self.limits.max_output_bytes} bytes; the output was cut there and the run stopped",
                             seconds, output_bytes=int(header.get("output_bytes", size)), sandbox="bwrap-warm")
        if self.limits.max_file_mb is not None and rc in (-_FSIZE_SIGNAL, 128 + _FSIZE_SIGNAL):
            return RunResult(rc, output, FILE_LIMIT, f"a process tried to write a file larger than "
                             f"{self.limits.max_file_mb} MiB and was refused (RLIMIT_FSIZE)", seconds,
                             sandbox="bwrap-warm")
        # A child killed by a signal is reported as a shell reports it, as the plain run would be.
        code = 128 - rc if rc < 0 else rc
        return RunResult(code, output, OK, "" if code == 0 else f"the command exited with status {code}",
                         seconds, output_bytes=size, sandbox="bwrap-warm")

    def _limit_hit(self, group: RunCgroup, oom: int, forks: int, timeout: float,
                   started: float) -> RunResult | None:
        seconds = time.monotonic() - started
        if group.oom_kills() > oom:
            return RunResult(None, "", MEMORY_LIMIT, f"the run used more than {self.limits.memory_mb} MiB: "
                             "the kernel killed a process for memory", seconds, sandbox="bwrap-warm")
        if group.pids_limit_hits() > forks:
            return RunResult(None, "", PROCESS_LIMIT, f"the run tried to exceed {self.limits.max_procs} "
                             "processes/threads at once (a fork bomb?)", seconds, sandbox="bwrap-warm")
        return None
