"""Stopping a real `issuebench eval` leaves no folder of an instance in flight, and keeps what an
earlier run finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from issuebench import config
from issuebench.demo import demo_tasks
from issuebench.interrupts import descendants
from tests.integration.test_eval_interrupt import blocking_patch, write_predictions
from tests.interruptible import interruptible

pytestmark = pytest.mark.xdist_group("demo-eval")

ENV = {**os.environ, "COLUMNS": "200"}


def eval_cmd(out: Path, preds: Path | str, *extra: str) -> list[str]:
    return interruptible("-m", "issuebench", "eval", "--dataset", "demo", "--predictions", str(preds),
                         "--run-id", "r", "--workers", "2", "--timeout", "120", "--output", str(out), *extra)


def model_dir(out: Path, model: str = "m") -> Path:
    return out / "logs" / "run_evaluation" / "r" / model


def results(folder: Path) -> dict[str, str]:
    return {p.parent.name: json.loads(p.read_text())["status"] for p in folder.glob("*/result.json")}


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def workspaces_of(pid: int) -> list[Path]:
    return list(config.workspaces_dir().glob(f"ws-{pid}-*"))


def wait_until(condition, proc_alive, timeout: float = 240, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc_alive(), f"eval ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def sandbox_running(pid: int) -> bool:
    """A test run is in its sandbox: the instance is in flight past its patch."""
    for child in descendants(pid):
        try:
            if b"bwrap" in Path(f"/proc/{child}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def stop_group(proc: subprocess.Popen, timeout: float = 90) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("eval did not stop after the signal")


def eleven_of_twelve(tmp_path: Path) -> tuple[list, str, Path]:
    """Predictions for the demo: gold, except the first, whose fix sleeps for 10 minutes."""
    tasks = demo_tasks()
    preds = write_predictions(tmp_path / "p.jsonl", tasks, blocking_patch(tasks[0], tmp_path))
    return tasks, tasks[0].instance_id, preds


def assert_nothing_of_the_instance_in_flight(out: Path, blocked: str, pid: int, kept: int) -> None:
    folder = model_dir(out)
    assert not (folder / blocked).exists(), sorted(p.name for p in (folder / blocked).iterdir())
    assert hidden(folder) == []
    assert list(results(folder).values()) == ["resolved"] * kept
    assert workspaces_of(pid) == []  # every workspace of the stopped run was removed
    # report and regrade see the finished instances, and nothing else.
    report = subprocess.run([sys.executable, "-m", "issuebench", "report", str(folder.parent), "-f", "json"],
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["systems"][0]["status_counts"] == {"resolved": kept}
    regrade = subprocess.run([sys.executable, "-m", "issuebench", "regrade", "--logs", str(folder.parent),
                              "--dataset", "demo"], capture_output=True, text=True, timeout=120)
    assert regrade.returncode == 0, regrade.stderr
    assert f"regraded {kept} log(s)" in regrade.stdout and f"{kept} resolved" in regrade.stdout


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130)])
def test_a_stopped_run_leaves_no_folder_of_the_instance_in_flight(tmp_path, signum, status):
    tasks, blocked, preds = eleven_of_twelve(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen(eval_cmd(out, preds), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=ENV)
    assert proc.stdout is not None
    finished = 0
    for line in proc.stdout:  # not a terminal: one line per finished instance
        finished += line.startswith("[")
        if finished == len(tasks) - 1:
            break
    wait_until(lambda: sandbox_running(proc.pid), lambda: proc.poll() is None, what="the sandbox")
    os.killpg(proc.pid, signum)
    _out, err = stop_group(proc)
    assert proc.returncode == status, err
    assert "Traceback" not in err
    said = [line for line in err.splitlines() if "interrupted" in line]
    assert len(said) == 1 and "rerun to resume" in said[0] and "1 in flight discarded" in said[0], err
    assert_nothing_of_the_instance_in_flight(out, blocked, proc.pid, kept=len(tasks) - 1)


def test_an_interrupted_rerun_keeps_the_result_the_earlier_run_finished(tmp_path):
    """Decided: the earlier finished folder stays whole (a report still reads its verdict), and the
    next rerun runs the changed patch."""
    task = demo_tasks()[0]
    out = tmp_path / "out"
    preds = write_predictions(tmp_path / "p.jsonl", [task], task.patch)
    first = subprocess.run(eval_cmd(out, preds), capture_output=True, text=True, timeout=300, env=ENV)
    assert first.returncode == 0, first.stderr
    folder = model_dir(out) / task.instance_id
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert json.loads(before["result.json"])["status"] == "resolved"

    write_predictions(preds, [task], blocking_patch(task, tmp_path))  # a changed patch: it runs again
    proc = subprocess.Popen(eval_cmd(out, preds), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=ENV)
    wait_until(lambda: sandbox_running(proc.pid), lambda: proc.poll() is None, what="the sandbox")
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = stop_group(proc)
    assert proc.returncode == 130, err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert hidden(model_dir(out)) == []
