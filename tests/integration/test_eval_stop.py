"""Stopping a real `issuebench eval` (SIGINT, SIGTERM, SIGHUP from a closed terminal, SIGKILL) leaves
no folder of an instance in flight, keeps what an earlier run finished, and one eval runs a run id."""

from __future__ import annotations

import json
import os
import pty
import select
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


def eval_cmd(out: Path, preds: Path | str, *extra: str, hangup: bool = True) -> list[str]:
    return interruptible("-m", "issuebench", "eval", "--dataset", "demo", "--predictions", str(preds),
                         "--run-id", "r", "--workers", "2", "--timeout", "120", "--output", str(out), *extra,
                         hangup=hangup)


def model_dir(out: Path, model: str = "m") -> Path:
    return out / "logs" / "run_evaluation" / "r" / model


def results(folder: Path) -> dict[str, str]:
    return {p.parent.name: json.loads(p.read_text())["status"] for p in folder.glob("*/result.json")
            if not p.parent.name.startswith(".")}


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
    assert not (out / "logs/run_evaluation/r/.lock").exists()  # released and removed
    # report and regrade see the finished instances, and nothing else.
    report = subprocess.run([sys.executable, "-m", "issuebench", "report", str(folder.parent), "-f", "json"],
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["systems"][0]["status_counts"] == {"resolved": kept}
    regrade = subprocess.run([sys.executable, "-m", "issuebench", "regrade", "--logs", str(folder.parent),
                              "--dataset", "demo"], capture_output=True, text=True, timeout=120)
    assert regrade.returncode == 0, regrade.stderr
    assert f"regraded {kept} log(s)" in regrade.stdout and f"{kept} resolved" in regrade.stdout


def started_until_one_is_left(tmp_path: Path) -> tuple[subprocess.Popen, list, str, Path]:
    """eval of eleven_of_twelve, once eleven have finished and the blocked one is in its sandbox."""
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
    return proc, tasks, blocked, out


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_run_leaves_no_folder_of_the_instance_in_flight(tmp_path, signum, status):
    proc, tasks, blocked, out = started_until_one_is_left(tmp_path)
    os.killpg(proc.pid, signum)
    _out, err = stop_group(proc)
    assert proc.returncode == status, err
    assert "Traceback" not in err
    said = [line for line in err.splitlines() if "interrupted" in line]
    assert len(said) == 1 and "rerun to resume" in said[0] and "1 in flight discarded" in said[0], err
    if signum == signal.SIGTERM:
        assert "on SIGTERM" in said[0]
    assert_nothing_of_the_instance_in_flight(out, blocked, proc.pid, kept=len(tasks) - 1)


def test_closing_the_terminal_stops_the_run_as_ctrl_c_does(tmp_path):
    """The terminal goes away (SIGHUP from the kernel, and the line can no longer be printed)."""
    tasks, blocked, preds = eleven_of_twelve(tmp_path)
    out = tmp_path / "out"
    cmd = eval_cmd(out, preds)
    pid, terminal = pty.fork()  # the child leads a session whose controlling terminal is the pty
    if pid == 0:
        try:
            os.execve(cmd[0], cmd, ENV)
        finally:
            os._exit(127)
    try:
        def drain() -> bool:  # read what eval draws, so that it never blocks on a full terminal
            while select.select([terminal], [], [], 0)[0]:
                try:
                    if not os.read(terminal, 65536):
                        break
                except OSError:
                    break
            return os.waitpid(pid, os.WNOHANG) == (0, 0)

        wait_until(lambda: len(results(model_dir(out))) == len(tasks) - 1 and sandbox_running(pid), drain,
                   what="11 results and the sandbox")
    finally:
        os.close(terminal)  # the terminal is closed: the kernel sends SIGHUP to the session
    deadline = time.monotonic() + 90
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            pytest.fail("eval did not stop after its terminal closed")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(done[1]) == 129
    assert_nothing_of_the_instance_in_flight(out, blocked, pid, kept=len(tasks) - 1)


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


def test_one_eval_per_run_a_second_stops_at_once_and_a_crash_releases_the_lock(tmp_path):
    tasks, blocked, preds = eleven_of_twelve(tmp_path)
    out = tmp_path / "out"
    first = subprocess.Popen(eval_cmd(out, preds), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, env=ENV)
    try:
        wait_until(lambda: len(results(model_dir(out))) == len(tasks) - 1 and sandbox_running(first.pid),
                   lambda: first.poll() is None, what="11 results and the sandbox")
        started = time.monotonic()
        second = subprocess.run(eval_cmd(out, "gold"), capture_output=True, text=True, timeout=120, env=ENV)
        assert time.monotonic() - started < 30
        assert second.returncode == 2, second.stderr
        error = [line for line in second.stderr.splitlines() if line.startswith("error:")]
        assert len(error) == 1, second.stderr
        assert "run r " in error[0] and f"pid {first.pid}" in error[0] and "issuebench eval" in error[0]
        assert "Traceback" not in second.stderr
        assert len(results(model_dir(out))) == len(tasks) - 1  # the second one wrote nothing
    finally:
        left = descendants(first.pid)
        os.killpg(first.pid, signal.SIGKILL)  # a crash: no clean-up runs
        first.wait(timeout=60)
        for pid in left:  # the sandboxes this test's eval started, in their own sessions
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    folder = model_dir(out)
    assert not (folder / blocked).exists()
    assert hidden(folder) == [f".{blocked}.partial"]  # the crash's half instance, hidden from readers
    report = subprocess.run([sys.executable, "-m", "issuebench", "report", str(folder.parent), "-f", "json"],
                            capture_output=True, text=True, timeout=120)
    assert json.loads(report.stdout)["systems"][0]["status_counts"] == {"resolved": len(tasks) - 1}

    # The lock died with its process: the next eval of the run runs, and sweeps what the crash left.
    write_predictions(preds, tasks, tasks[0].patch)
    third = subprocess.run(eval_cmd(out, preds), capture_output=True, text=True, timeout=300, env=ENV)
    assert third.returncode == 0, third.stderr
    assert json.loads((out / "m.r.json").read_text())["resolved_instances"] == len(tasks)
    assert hidden(folder) == []


def test_a_run_started_with_nohup_survives_its_terminal_closing(tmp_path):
    _tasks, _blocked, preds = eleven_of_twelve(tmp_path)
    proc = subprocess.Popen(["nohup", *eval_cmd(tmp_path / "out", preds, hangup=False)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, env=ENV)
    wait_until(lambda: sandbox_running(proc.pid), lambda: proc.poll() is None, what="the sandbox")
    os.killpg(proc.pid, signal.SIGHUP)
    time.sleep(1)
    assert proc.poll() is None  # SIGHUP ignored by nohup stays ignored
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = stop_group(proc)
    assert proc.returncode == 130, err


def _catches(pid: int, signum: int) -> bool:
    """Whether the process has a handler for `signum` (SigCgt in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught, 16) & (1 << (signum - 1)))


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_stopped_while_the_command_is_still_importing(tmp_path, signum, status):
    out = tmp_path / "out"
    proc = subprocess.Popen(eval_cmd(out, "gold"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ENV)
    # The command's first lines set up SIGHUP: from then on it imports the CLI, which takes a while.
    wait_until(lambda: _catches(proc.pid, signal.SIGHUP), lambda: proc.poll() is None, timeout=30,
               what="the entry point's signal set-up")
    os.kill(proc.pid, signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == status, stderr
    assert stderr == "interrupted\n" and stdout == ""
    assert not out.exists()
