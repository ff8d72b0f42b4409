"""The run driver on Ctrl-C, and the gate that keeps an interrupted job from recording anything."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

from issuebench.harness.run import _forget_env_failures
from issuebench.interrupts import StopFlag, may_record, working_for

# Run in its own process: stopping kills every process the driver's process started.
DRIVER = textwrap.dedent("""
    import subprocess, sys
    from issuebench.executors import Interrupted, LocalExecutor, drive
    from issuebench.interrupts import may_record

    jobs = ["slow", "fast", "never"]
    recorded, cut_short = [], []

    def work(job):
        if job == "slow":
            done = subprocess.run(["sleep", "600"])  # killed by the driver, so the job returns at once
            if done.returncode != 0:
                cut_short.append(job)
        with may_record() as allowed:
            if allowed:
                recorded.append(job)
        return job

    def handle(index, result):
        if jobs[index] == "fast":
            raise KeyboardInterrupt  # what Ctrl-C raises in the main thread

    try:
        drive(LocalExecutor(2), work, jobs, handle)
    except Interrupted as stop:
        print(stop.kept, stop.discarded, sorted(cut_short), sorted(recorded))
        sys.exit(0)
    print("not interrupted")
    sys.exit(1)
""")


def test_ctrl_c_kills_jobs_in_flight_discards_them_and_drops_those_not_started():
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # "fast" finished and is kept; "slow" was running: killed, discarded, and it recorded nothing;
    # "never" (two workers, both busy) was not started.
    assert proc.stdout.split("\n")[0] == "1 1 ['slow'] ['fast']"
    assert time.monotonic() - started < 100  # the 600 s sleep was cut short


def test_nothing_is_recorded_after_the_flag_stops(tmp_path: Path):
    flag = StopFlag()
    with working_for(flag), may_record() as allowed:
        assert allowed
    flag.stop()
    with working_for(flag), may_record() as allowed:
        assert not allowed
    with may_record() as allowed:  # outside any run's worker: always allowed
        assert allowed


def test_result_files_and_the_shared_cache_honour_the_gate(tmp_path: Path):
    from issuebench.harness import cache
    from issuebench.harness.artifacts import write_instance_result
    from issuebench.models import InstanceReport, InstanceStatus

    report = InstanceReport(instance_id="a", model_name_or_path="m", status=InstanceStatus.RESOLVED)
    flag = StopFlag()
    flag.stop()
    with working_for(flag):
        write_instance_result(tmp_path / "a", report)
        assert not (tmp_path / "a" / "result.json").exists()
    write_instance_result(tmp_path / "a", report)
    with working_for(flag):
        cache.store("k" * 24, tmp_path / "a")
        assert not cache.restore("k" * 24, tmp_path / "b")
    assert not cache.restore("k" * 24, tmp_path / "b")  # never stored


def test_env_builds_failed_since_the_interrupt_are_forgotten(tmp_path: Path):
    old, new = tmp_path / "aaaa.failed.json", tmp_path / "bbbb.failed.json"
    for path in (old, new):
        path.write_text("{}")
    os.utime(old, (1_000_000, 1_000_000))
    ctx = SimpleNamespace(env_builder=SimpleNamespace(root=tmp_path))
    _forget_env_failures(ctx, since=time.time() - 60)  # type: ignore[arg-type]
    assert old.exists() and not new.exists()
