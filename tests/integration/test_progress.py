"""Progress as a user sees it: a live bar on a terminal (a real pseudo-terminal here), one line per
finished item off it (a pipe, as in a CI log or `| tee`). Environment builds and predictions here;
collect's stages and setup's attempts: test_setup_acceptance.py; synth's candidates:
test_synth_real_sandbox.py."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from issuebench.demo import demo_tasks
from issuebench.llm import solve_script

pytestmark = pytest.mark.xdist_group("demo-eval")
ISSUEBENCH = Path(sys.executable).with_name("issuebench")


def on_a_terminal(argv: list[str], cwd: Path) -> tuple[int, str]:
    """Run the command with a pseudo-terminal as stdin, stdout and stderr; everything it drew."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    proc = subprocess.Popen(argv, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 600)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    drawn = b"".join(chunks).decode("utf-8", "replace")
    return proc.wait(timeout=60), re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)  # colours and cursor moves out


def off_a_terminal(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)


def test_environment_builds_show_a_bar_on_a_terminal_and_a_line_each_off_it(tmp_path):
    argv = [str(ISSUEBENCH), "envs", "build", "demo", "--offline"]
    piped = off_a_terminal(argv, tmp_path)
    assert piped.returncode == 0, piped.stderr
    n = int(piped.stdout.split(" environment(s)")[0].rsplit(" ", 1)[1])
    lines = [line for line in piped.stdout.splitlines() if line.startswith("[")]
    assert [line.split(" ", 2)[:2] for line in lines] == [[f"[{k}/{n}]", "built"] for k in range(1, n + 1)]
    status, drawn = on_a_terminal(argv, tmp_path)
    assert status == 0, drawn
    assert "envs build" in drawn and "━" in drawn  # the bar: its label and its line (no table here)
    assert f"[{n}/{n}] built" in drawn  # the line of each build stays above the bar


def test_predictions_show_a_line_per_instance_off_a_terminal_and_a_bar_on_one(tmp_path):
    tasks = demo_tasks()[:2]
    script = tmp_path / "replay.json"
    script.write_text(json.dumps(solve_script(tasks, mode="infer")))
    ids = ",".join(t.instance_id for t in tasks)
    argv = [str(ISSUEBENCH), "infer", "-d", "demo", "-i", ids, "--model", f"replay:{script}", "--no-resume"]
    piped = off_a_terminal([*argv, "-o", str(tmp_path / "a")], tmp_path)
    assert piped.returncode == 0, piped.stderr
    counted = [line.split(":")[0].split(" ") for line in piped.stdout.splitlines() if line.startswith("[")]
    assert sorted(c[0] for c in counted) == ["[1/2]", "[2/2]"], piped.stdout  # one line each, counted
    assert sorted(c[1] for c in counted) == sorted(t.instance_id for t in tasks)
    status, drawn = on_a_terminal([*argv, "-o", str(tmp_path / "b")], tmp_path)
    assert status == 0, drawn
    assert "infer" in drawn and "2/2" in drawn
