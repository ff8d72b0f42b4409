"""issuebench's pytest plugin: the runner's own outcome for every test, sent to the harness.

The harness loads it into the test run with `-p issuebench_runner_report` and names, in the
environment variable below, the write end of a channel (a FIFO whose reader is the harness, outside
the sandbox). The plugin opens the channel and removes both the variable and the FIFO's name when
pytest imports it, before any conftest, test module or code under test is imported: from then on
only this open descriptor reaches the harness, nested pytest sessions (pytester, subprocesses) find
no channel to write to, and nothing the tests print can change what is sent. At the end of the
session it writes one JSON line: every test id pytest reported and its outcome, and the exit status.

It runs inside the environment of the task, whatever its Python and pytest: plain syntax that
Python 2.7 still reads, and only hooks pytest has had since 2.x.
"""

import json
import os

CHANNEL_VARIABLE = "ISSUEBENCH_RUNNER_REPORT"

_channel = None
_owner = None


def _open_channel():
    path = os.environ.pop(CHANNEL_VARIABLE, None)
    if not path:
        return None
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return None
    try:
        os.unlink(path)  # no second writer can open it by name
    except OSError:
        pass
    return fd


_channel = _open_channel()
# The process that opened the channel: a test's forked child that unwinds through the session it
# inherited (eventlet's fork tests raise SystemExit in the child) finishes that session too, and
# is not the runner.
_opener = os.getpid()

# A test's outcome is the worst of its phases: an error in setup or teardown outranks the call.
_RANK = {"PASSED": 0, "XPASS": 1, "SKIPPED": 1, "XFAIL": 1, "FAILED": 2, "ERROR": 3}


def _phase_status(report):
    expected_failure = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.outcome == "passed":
            return "XPASS" if expected_failure else "PASSED"
        if report.outcome == "failed":
            return "FAILED"
        return "XFAIL" if expected_failure else "SKIPPED"
    if report.outcome == "failed":
        return "ERROR"
    if report.outcome == "skipped":
        return "XFAIL" if expected_failure else "SKIPPED"
    return None


class _Recorder:
    """Registered with the first (outermost) session's plugin manager only: a session that
    pytest's own tests start inside this process has a manager of its own and never calls it."""

    def __init__(self, config):
        self.outcomes = {}
        self.asked_for = _asked_for(config)
        # Ids as the terminal summary prints them, from the working folder: a node id is relative
        # to the rootdir, which an ini file below the working folder (`tests/pytest.ini`) moves.
        self._shown = getattr(config, "cwd_relative_nodeid", None)

    def _name(self, report):
        if self._shown is None:
            return report.nodeid
        # pytest 9 gives the summary's own call a NodeId object (`report.id`); older ones a string.
        shown_as = getattr(report, "id", None)
        if shown_as is None or isinstance(shown_as, str):
            shown_as = report.nodeid
        try:
            return str(self._shown(shown_as))
        except Exception:
            return report.nodeid

    def _record(self, nodeid, status):
        previous = self.outcomes.get(nodeid)
        if previous is None or _RANK[status] >= _RANK[previous]:
            self.outcomes[nodeid] = status

    def pytest_runtest_logreport(self, report):
        status = _phase_status(report)
        if status is not None:
            self._record(self._name(report), status)

    def pytest_collectreport(self, report):
        if report.failed:
            self._record(self._name(report), "ERROR")  # a module that cannot be collected

    def pytest_sessionfinish(self, session, exitstatus):
        global _channel
        if _channel is None or os.getpid() != _opener:
            return
        document = {"issuebench_runner_report": 1, "exitstatus": int(exitstatus), "tests": self.outcomes}
        if self.asked_for is not None:
            document["asked_for"] = self.asked_for
        data = (json.dumps(document, sort_keys=True) + "\n").encode("utf-8")
        fd, _channel = _channel, None
        try:
            while data:
                data = data[os.write(fd, data):]
        except OSError:
            pass
        finally:
            os.close(fd)


def _asked_for(config):
    """The paths the command line gave pytest, relative to the working folder ("." for all of it),
    or None when any argument is not a path on disk (`--pyargs` module names)."""
    cwd = os.getcwd()
    found = []
    for arg in getattr(config, "args", None) or []:
        path = str(arg).split("::")[0]
        if not os.path.exists(path):
            return None
        found.append(os.path.normpath(os.path.relpath(path, cwd) if os.path.isabs(path) else path))
    return found or None


def pytest_configure(config):
    global _owner
    if _channel is None or _owner is not None:
        return
    _owner = config
    config.pluginmanager.register(_Recorder(config), "issuebench-runner-recorder")
