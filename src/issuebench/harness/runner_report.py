"""The test runner's own report, read over a channel the code under test cannot rewrite.

The text log is what the runner printed, and everything the code under test prints lands in the
same stream: a patch can print `PASSED <id>` lines and a closing summary. So the harness does not
take the text alone. For pytest, a plugin of ours (`data/issuebench_runner_report.py`) rides along
in the test run and, at the end of the session, writes every test's outcome to a FIFO whose reader
is the harness, outside the sandbox. The FIFO is opened by the plugin as pytest imports it, before
any code of the project runs, and its name is removed at once, so afterwards only that descriptor
reaches the harness; what arrives is append-only (nothing can take back what the runner wrote) and
must be exactly one report.

The grade then asks the two to agree: a graded test that the text counts as a success must be one
the runner reported, with an outcome that is a success too (`disagreements`). What in-process code
can still do, and why the verdict holds, is in docs/security.md.

Runners other than pytest (unittest, Django's, SymPy's) and pytest started through tox, which drops
the variables, send no report; their verdict rests on the text and the exit status.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from issuebench import config
from issuebench.grading import lookup_status
from issuebench.models import TestStatus, TestStatusMap
from issuebench.sandbox import Bind, Limits, RunResult, Sandbox

PLUGIN = "issuebench_runner_report"
# Imported by its host path in the sandbox too: the sandbox binds the package's folder back
# (sandbox.bwrap.package_bind), wherever the package is installed.
PLUGIN_DIR = Path(__file__).resolve().parent / "data"
CHANNEL_VARIABLE = "ISSUEBENCH_RUNNER_REPORT"
# Where the channel appears inside the sandbox (its /tmp is private to the run).
SANDBOX_CHANNEL_DIR = "/tmp/.issuebench-report"
CHANNEL_NAME = "channel"
# A report larger than this is not one the runner wrote for a task's tests.
MAX_REPORT_BYTES = 64 * 1024 * 1024
ARTIFACT = "runner_report.json"

_SUCCESS = {
    "f2p": {"PASSED", "XFAIL"},
    "p2p": {"PASSED", "XFAIL", "SKIPPED"},
}


@dataclass
class RunnerReport:
    """What came over the channel: the runner's outcomes, or why there are none to trust."""

    tests: dict[str, str] | None = None  # test id -> PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS
    exitstatus: int | None = None
    # The paths pytest's command line named (relative to the working folder), when all were paths.
    asked_for: list[str] | None = None
    problem: str | None = None  # set when bytes arrived that are not exactly one report
    raw: bytes = b""

    @property
    def present(self) -> bool:
        return self.tests is not None


def read_report(data: bytes) -> RunnerReport:
    """The single report in `data`; nothing at all is "no report", anything else a problem."""
    if not data.strip():
        return RunnerReport(raw=data)
    if len(data) > MAX_REPORT_BYTES:
        return RunnerReport(problem=f"the runner report channel received {len(data)} bytes", raw=data[:4096])
    lines = [line for line in data.split(b"\n") if line.strip()]
    if len(lines) != 1:
        return RunnerReport(problem=f"the runner report channel received {len(lines)} reports, "
                                    "where only the runner writes one", raw=data)
    try:
        doc = json.loads(lines[0])
        tests = doc["tests"]
        exitstatus = doc.get("exitstatus")
        if doc.get("issuebench_runner_report") != 1 or not isinstance(tests, dict):
            raise ValueError("not a runner report")
        tests = {str(k): str(v) for k, v in tests.items()}
    except (ValueError, KeyError, TypeError) as exc:
        return RunnerReport(problem=f"the runner report is unreadable ({exc})", raw=data)
    asked_for = doc.get("asked_for")
    if not (isinstance(asked_for, list) and all(isinstance(a, str) for a in asked_for)):
        asked_for = None
    return RunnerReport(tests=tests, exitstatus=exitstatus if isinstance(exitstatus, int) else None,
                        asked_for=asked_for, raw=data)


def keyed_like(parser: Callable[[str], TestStatusMap], tests: Mapping[str, str]) -> dict[str, str]:
    """The runner's outcomes under the ids the text parser gives the same tests.

    Parsers rewrite ids (a path-like parameter cut to its last part, ids cut at a space): each of
    the runner's ids goes through the parser as the summary line pytest prints for it, so both
    sides speak of a test by the same name. Where two runner ids land on one name, the worse wins.
    """
    out: dict[str, str] = {}
    for raw_id, status in tests.items():
        # pytest before 4 names a test of a class instance `Class::()::test`, and prints `Class::test`.
        test_id = raw_id.replace("::()::", "::")
        parsed = parser(f"PASSED {test_id}")
        key = next(iter(parsed), test_id) if len(parsed) == 1 else test_id
        if key not in out or _worse(status, out[key]):
            out[key] = status
    return out


# A test's name has a letter in it; a progress mark (`[100%]`, `[`) has none.
_NAMES_A_TEST = re.compile(r"[A-Za-z]")
_ORDER = ("PASSED", "XPASS", "XFAIL", "SKIPPED", "FAILED", "ERROR")


def _worse(a: str, b: str) -> bool:
    rank = {s: i for i, s in enumerate(_ORDER)}
    return rank.get(a, len(_ORDER)) > rank.get(b, len(_ORDER))


def disagreements(status_map: TestStatusMap, report: RunnerReport, fail_to_pass: Iterable[str],
                  pass_to_pass: Iterable[str], parser: Callable[[str], TestStatusMap],
                  *, limit: int = 5) -> list[str]:
    """Graded tests the text log counts as passing while the runner's own report does not.

    Empty when the report agrees or there is none; a report that is not exactly one runner
    report is a disagreement by itself.
    """
    if report.problem:
        return [report.problem]
    if not report.present:
        return []
    runner = keyed_like(parser, report.tests or {})
    found: list[str] = []
    for kind, ids in (("f2p", fail_to_pass), ("p2p", pass_to_pass)):
        for test_id in ids:
            if not _NAMES_A_TEST.search(test_id):
                # `[100%]`: the reference's parser took a nested run's progress mark for a test id,
                # and its lists keep it (pytest-dev__pytest-5262); no runner reports such a name.
                continue
            if not _could_report(test_id, report.asked_for):
                continue
            text_status = lookup_status(test_id, status_map)
            if text_status is None or text_status.value not in _SUCCESS[kind]:
                continue  # the text already fails it: nothing to contradict
            own = _runner_status(test_id, runner)
            if own is None:
                found.append(f"{test_id}: the log says {text_status.value}, the runner did not report it")
            elif own not in _SUCCESS[kind]:
                found.append(f"{test_id}: the log says {text_status.value}, the runner says {own}")
    if len(found) > limit:
        found = [*found[:limit], f"... and {len(found) - limit} more"]
    return found


def _could_report(test_id: str, asked_for: list[str] | None) -> bool:
    """Whether the runner was asked to run the file `test_id` names.

    pytest-dev__pytest-7521 lists `test_capsysbinary.py::test_hello` as a PASSING test: the
    reference's parser read a nested pytester run's summary line, whose file lives in a temporary
    folder. The command named only testing/test_capture.py, so no runner can report that name; it
    is graded from the text, as the reference grades it. A file the command names is always checked,
    so a patch that stops a named file from running cannot print its tests into passing.
    """
    if not asked_for or "::" not in test_id:
        return True
    path = test_id.split("::")[0]
    return any(arg == "." or path == arg or path.startswith(arg.rstrip("/") + "/") for arg in asked_for)


def _runner_status(test_id: str, runner: Mapping[str, str]) -> str | None:
    if test_id in runner:
        return runner[test_id]
    # Ids the dataset stores cut inside their parameters match as grading matches them.
    as_status = {k: TestStatus.PASSED if v in ("PASSED", "XFAIL") else TestStatus.FAILED
                 for k, v in runner.items() if v in ("PASSED", "XFAIL", "FAILED", "ERROR")}
    found = lookup_status(test_id, as_status)
    if found is None:
        return None
    return "PASSED" if found is TestStatus.PASSED else "FAILED"


def plugin_failed_to_load(output: str) -> bool:
    """Whether pytest stopped because it could not import the plugin (a test command that sets
    its own PYTHONPATH hides ours): the run is then repeated without it."""
    return PLUGIN in output and ("Error importing plugin" in output or "No module named" in output)


@dataclass
class ReportChannel:
    """A FIFO the test run writes the runner's report to, read by a thread of the harness.

    The harness holds a write end of its own for the whole run, so the reader never sees the end
    of the stream before the run is over, and a writer in the sandbox never blocks on a missing
    reader.
    """

    folder: Path
    sandboxed: bool = True
    _chunks: list[bytes] = field(default_factory=list)
    _size: int = 0

    def __enter__(self) -> ReportChannel:
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        self.fifo = self.folder / CHANNEL_NAME
        os.mkfifo(self.fifo, 0o600)
        self._read_fd = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)
        self._hold_fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
        self._thread = threading.Thread(target=self._drain, name="runner-report", daemon=True)
        self._thread.start()
        return self

    def _drain(self) -> None:
        try:
            while True:
                ready, _, _ = select.select([self._read_fd], [], [], 1.0)
                if not ready:
                    continue
                try:
                    chunk = os.read(self._read_fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    return  # every writer closed, ours last
                self._size += len(chunk)
                if self._size <= MAX_REPORT_BYTES + 1:
                    self._chunks.append(chunk)
        except (OSError, ValueError):
            return  # the descriptor was closed under us: the run is over

    def binds(self) -> list[Bind]:
        if not self.sandboxed:
            return []
        return [Bind(self.folder, dst=SANDBOX_CHANNEL_DIR, writable=True)]

    def env(self, run_env: Mapping[str, str]) -> dict[str, str]:
        """`run_env` with the plugin loaded into any pytest started with it."""
        channel = f"{SANDBOX_CHANNEL_DIR}/{CHANNEL_NAME}" if self.sandboxed else str(self.fifo)
        out = dict(run_env)
        out["PYTEST_ADDOPTS"] = " ".join(filter(None, [out.get("PYTEST_ADDOPTS", ""), f"-p {PLUGIN}"]))
        out["PYTHONPATH"] = ":".join(filter(None, [out.get("PYTHONPATH", ""), str(PLUGIN_DIR)]))
        out[CHANNEL_VARIABLE] = channel
        return out

    def __exit__(self, *exc: object) -> None:
        os.close(self._hold_fd)
        self._thread.join(timeout=10)
        os.close(self._read_fd)
        shutil.rmtree(self.folder, ignore_errors=True)

    def report(self) -> RunnerReport:
        data = b"".join(self._chunks)
        if self._size > MAX_REPORT_BYTES:
            return RunnerReport(problem=f"the runner report channel received {self._size} bytes", raw=data[:4096])
        return read_report(data)


def run_reporting(sandbox: Sandbox, ws: Path, script: str, *, binds: Sequence[Bind], env: Mapping[str, str],
                  limits: Limits, output_path: Path, log: Callable[[str], None]) -> tuple[RunResult, RunnerReport]:
    """`bash -c script` in the sandbox over the workspace, with the runner's report read beside it."""
    channel = ReportChannel(ws.parent / f"{ws.name}.report", sandboxed=sandbox.name != "none")
    try:  # the output file goes however the run ends (a stop from outside raises out of it)
        with channel:
            res = sandbox.run(["bash", "-c", script], workspace=ws, binds=[*binds, *channel.binds()],
                              env=channel.env(env), limits=limits, network=False, cwd=config.TESTBED_PATH,
                              output_path=output_path)
        if not plugin_failed_to_load(res.output):
            return res, channel.report()
        log("the test command hides the runner-report plugin (its own PYTHONPATH): run again without it")
        res = sandbox.run(["bash", "-c", script], workspace=ws, binds=binds, env=env, limits=limits,
                          network=False, cwd=config.TESTBED_PATH, output_path=output_path)
        return res, RunnerReport()
    finally:
        output_path.unlink(missing_ok=True)
