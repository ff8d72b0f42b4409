"""issuebench setup's pytest plugin: each test file of a judging run gets its own time budget.

Setup judges an environment on a sample of a suite's files; one slow file (sympy's test_ode.py
runs for over eight minutes) must not hold the whole judgement. Loaded with
`-p issuebench_file_budget` and `ISSUEBENCH_FILE_BUDGET=<seconds>`: the time each file's tests
take (setup, call, teardown) is added up, and when a file's budget runs out the test running is
stopped (SIGALRM) and the file's remaining tests are skipped. The file is named on the run's own
stdout, on a line `ISSUEBENCH-FILE-CUT <file>`; setup leaves every result of such a file out, so
it neither passes nor fails the environment. Each file's first test also names its file, on a
line `ISSUEBENCH-FILE-START <file>`: when the memory limit kills the whole run, the last such line
says which file filled it, and setup runs the sample again without that one.

It runs inside the environment being judged, whatever its Python and pytest: plain syntax that
Python 2.7 still reads, and only plain hooks pytest has had since 2.x (no hook wrappers).
"""

import os
import signal
import time

import pytest

MARKER = "ISSUEBENCH-FILE-CUT"
START = "ISSUEBENCH-FILE-START"

try:
    _BUDGET = float(os.environ.get("ISSUEBENCH_FILE_BUDGET") or 0)
except ValueError:
    _BUDGET = 0.0
# The real stdout, before pytest captures it: the line naming a cut file must reach the log.
try:
    _OUT = os.dup(1)
except OSError:
    _OUT = None

_spent = {}
_cut = set()
_running = {}


class FileBudgetExceeded(BaseException):
    """Raised in the test that outlives its file's budget (a BaseException: a test's own
    `except Exception` does not swallow it)."""


def _file_of(nodeid):
    return nodeid.split("::", 1)[0]


def _say(text):
    if _OUT is not None:
        try:
            os.write(_OUT, ("\n" + text + "\n").encode("utf-8", "replace"))
        except OSError:
            pass


def _alarm(signum, frame):
    path = _running.get("file")
    if path is not None and path not in _cut:
        _cut.add(path)
        _say("%s %s after %.0fs" % (MARKER, path, _BUDGET))
    raise FileBudgetExceeded("the test file's time budget of %.0fs ran out" % _BUDGET)


def pytest_runtest_setup(item):
    if _BUDGET <= 0 or not hasattr(signal, "setitimer"):
        return
    path = _file_of(item.nodeid)
    if path in _cut:
        pytest.skip("issuebench: the file's time budget ran out")
    if path not in _spent:
        _spent[path] = 0.0
        _say("%s %s" % (START, path))
    left = _BUDGET - _spent.get(path, 0.0)
    if left <= 0:
        _cut.add(path)
        _say("%s %s after %.0fs" % (MARKER, path, _BUDGET))
        pytest.skip("issuebench: the file's time budget ran out")
    _running["file"] = path
    _running["start"] = time.time()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, left)


def pytest_runtest_logreport(report):
    if report.when != "teardown" or "start" not in _running:
        return
    signal.setitimer(signal.ITIMER_REAL, 0)
    path = _running.pop("file", None)
    started = _running.pop("start")
    if path is not None:
        _spent[path] = _spent.get(path, 0.0) + time.time() - started
