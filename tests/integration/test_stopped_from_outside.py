"""A run stopped from outside (a `kill` of every process, a cancelled job) writes no verdict for
what the stop cut short: not `sandbox_failed` for a sandbox killed under a record, not the
`unresolved` of tests killed halfway while the driver had not yet woken to its signal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from issuebench.executors import Interrupted, LocalExecutor, drive
from issuebench.interrupts import StopSignal, descendants
from issuebench.sandbox import Limits, get_sandbox
from tests.integration.test_eval_stop import (
    assert_nothing_of_the_instance_in_flight,
    started_until_one_is_left,
    stop_group,
)


def bwrap_below(pid: int) -> list[int]:
    found = []
    for child in descendants(pid):
        try:
            if Path(f"/proc/{child}/comm").read_text().strip() == "bwrap":
                found.append(child)
        except OSError:
            continue
    return found


def test_a_sandbox_killed_from_outside_stops_the_run_instead_of_failing_the_record(tmp_path: Path) -> None:
    sandbox = get_sandbox()
    if sandbox.name != "bwrap":
        pytest.skip("bubblewrap is not available here")
    ws = tmp_path / "ws"
    ws.mkdir()
    me = os.getpid()

    def kill_the_sandbox() -> None:
        deadline = time.monotonic() + 30
        while not (found := bwrap_below(me)) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # inside, sleeping
        for pid in found:  # the outermost bwrap is the one the run started
            os.kill(pid, signal.SIGTERM)
            break

    threading.Thread(target=kill_the_sandbox, daemon=True).start()
    with pytest.raises(StopSignal) as stopped:
        sandbox.run(["sleep", "30"], workspace=ws, limits=Limits(timeout=60))
    assert stopped.value.signum == signal.SIGTERM


def test_a_record_that_saw_the_stop_stops_the_fan_out_and_is_not_handled() -> None:
    handled: list[int] = []

    def work(record: int) -> int:
        if record == 1:
            raise StopSignal(signal.SIGTERM)
        return record

    with pytest.raises(Interrupted) as stopped:
        drive(LocalExecutor(workers=1), work, [0, 1, 2], lambda index, _result: handled.append(index))
    assert handled == [0]
    assert stopped.value.signum == signal.SIGTERM
    assert stopped.value.discarded == 1


STOP_BEFORE_THE_DRIVER_WAKES = textwrap.dedent("""
    import os, signal, threading
    from issuebench.interrupts import StopFlag, may_record, raise_on_stop_signals, working_for
    raise_on_stop_signals()
    flag = StopFlag()
    def worker():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
        with working_for(flag):
            # the kernel gives the signal to this thread; the main thread sleeps in its wait
            signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
            with may_record() as allowed:
                print("recorded" if allowed else "not recorded", flush=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    t = threading.Thread(target=worker)
    t.start()
    t.join()
""")


def test_a_stop_the_driver_has_not_woken_to_yet_already_forbids_recording() -> None:
    proc = subprocess.run([sys.executable, "-c", STOP_BEFORE_THE_DRIVER_WAKES], capture_output=True,
                          text=True, timeout=60)
    assert "not recorded" in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 128 + signal.SIGTERM or "StopSignal" in proc.stderr, proc.stderr


@pytest.mark.xdist_group("demo-eval")
def test_eval_whose_sandbox_is_killed_from_outside_keeps_what_finished_and_records_nothing_else(tmp_path):
    proc, tasks, blocked, out = started_until_one_is_left(tmp_path)
    time.sleep(0.5)
    for pid in bwrap_below(proc.pid):  # the sandboxes only: eval itself gets no signal
        os.kill(pid, signal.SIGTERM)
    _out, err = stop_group(proc)
    assert proc.returncode == 128 + signal.SIGTERM, err
    said = [line for line in err.splitlines() if "interrupted" in line]
    assert len(said) == 1 and "rerun to resume" in said[0] and "1 in flight discarded" in said[0], err
    assert_nothing_of_the_instance_in_flight(out, blocked, proc.pid, kept=len(tasks) - 1)
    statuses = [json.loads(p.read_text())["status"] for p in (out / "logs").rglob("result.json")]
    assert "sandbox_failed" not in statuses
