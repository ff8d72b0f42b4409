"""A run's launcher dies with the harness that started it, from its first instant: a harness killed
(SIGKILL) between its fork and bwrap's own --die-with-parent must not leave a run behind that no
one holds to its time limit. Both launchers: the shell one (setpriv, prlimit) and the Python one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from issuebench.sandbox import supervise

# The "harness": starts `sleep` through the launcher, says the sleeper's pid, then waits to be killed.
_HARNESS = """
import subprocess, sys, time
from issuebench.sandbox import supervise
if sys.argv[1] == "python":
    supervise._PRLIMIT = None
child = subprocess.Popen(supervise.launcher_argv([], {"CORE": 0}, ["sleep", "120"]))
time.sleep(0.5)
print(child.pid, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("launcher", ["shell", "python"])
def test_the_run_dies_with_a_harness_killed_by_sigkill(launcher: str) -> None:
    if launcher == "shell" and (supervise._PRLIMIT is None or supervise._SETPRIV is None):
        pytest.skip("no prlimit or setpriv (util-linux): the Python launcher is the one used")
    harness = subprocess.Popen([sys.executable, "-c", _HARNESS, launcher], stdout=subprocess.PIPE, text=True)
    try:
        sleeper = int(harness.stdout.readline())
        assert _alive(sleeper)
        os.kill(harness.pid, signal.SIGKILL)
        harness.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _alive(sleeper) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(sleeper), "the run outlived its harness"
    finally:
        harness.kill()


def test_a_launcher_whose_harness_is_already_gone_runs_nothing(tmp_path: Path) -> None:
    if supervise._PRLIMIT is None or supervise._SETPRIV is None:
        pytest.skip("no prlimit or setpriv (util-linux)")
    argv = supervise.launcher_argv([], {"CORE": 0}, ["touch", str(tmp_path / "ran")])
    # Started by another process than the one that built the command: as if the harness had died
    # and the launcher been handed to init.
    done = subprocess.run([sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)",
                           *argv], check=False)
    assert done.returncode == 125 and not (tmp_path / "ran").exists()
