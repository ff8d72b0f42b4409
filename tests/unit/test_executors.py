"""The executor choice and the local executor: results stream back, failures never stop a run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from issuebench.errors import IssuebenchError
from issuebench.executors import Failure, Gate, LocalExecutor, drive, get_executor, run_one


def square(x: int) -> int:
    if x == 3:
        raise ValueError("three is bad")
    return x * x


def die(x: int) -> int:
    if x == 1:
        os._exit(1)  # a pool process that dies mid-record
    return x


def test_local_executor_yields_every_record_once_and_turns_exceptions_into_failures():
    ex = get_executor("local", None, 3)
    got = dict(ex.map_unordered(square, [0, 1, 2, 3, 4]))
    assert sorted(got) == [0, 1, 2, 3, 4]
    assert [got[i] for i in (0, 1, 2, 4)] == [0, 1, 4, 16]
    assert got[3] == Failure("error", "ValueError: three is bad")


def test_the_local_pool_draws_a_record_only_when_the_driver_has_handled_one():
    """As on Ray: a Gate told to stop after three results leaves the rest undrawn (synth's
    --max-tasks), and what was drawn is handled, failures included."""
    handled: dict[int, object] = {}
    gate = Gate(list(range(12)), lambda: len(handled) >= 3)
    drive(LocalExecutor(2), square, gate, handled.__setitem__)
    assert 3 <= gate.drawn <= 4  # the three, and at most the one in flight beside the third
    assert sorted(handled) == list(range(gate.drawn))
    assert handled.get(3, Failure("error", "ValueError: three is bad")) == Failure("error", "ValueError: three is bad")


def test_a_dead_pool_process_is_a_lost_worker_not_a_crash():
    got = dict(LocalExecutor(2, kind="process").map_unordered(die, [1]))
    assert isinstance(got[0], Failure) and got[0].kind == "worker_lost"


def test_run_one_runs_inline_locally():
    assert run_one(get_executor("local"), square, 5) == 25


def test_unknown_executor_and_stray_address_are_one_line_errors():
    with pytest.raises(IssuebenchError, match="unknown executor 'dask'"):
        get_executor("dask")
    with pytest.raises(IssuebenchError, match="--ray-address needs --executor ray"):
        get_executor("local", "10.0.0.1:6379")


def test_ray_missing_prints_the_install_command_and_exits_2(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from issuebench.cli.main import app

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    result = CliRunner().invoke(app, ["eval", "-d", "demo", "-p", "gold", "-o", str(tmp_path),
                                      "--executor", "ray"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "pip install issuebench[ray]" in lines[0]
    assert not (tmp_path / "logs").exists()  # nothing ran


WORKER = """
import os, sys
from issuebench.harness.remote import worker_context
from pathlib import Path
from issuebench.harness import EvalOptions
ctx = worker_context(EvalOptions(output_dir=Path("driver-out"), run_id="r", no_sandbox=True, allow_clone=False,
                                 use_cache=False))
print(ctx.layout.output_dir)
if sys.argv[1] == "killed":
    os._exit(9)
"""


@pytest.mark.parametrize("end", ["exits", "killed"])
def test_a_workers_scratch_folder_lives_among_the_workspaces_and_goes_with_the_worker(tmp_path, end):
    import subprocess

    from issuebench import config
    from issuebench.harness.workspace import sweep_stale_workspaces

    home, tmp = tmp_path / "home", tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "ISSUEBENCH_HOME": str(home), "TMPDIR": str(tmp)}
    proc = subprocess.run([sys.executable, "-c", WORKER, end], env=env, capture_output=True, text=True)
    work = config.workspaces_root(home)   # the same choice as the worker's, on the same machine
    scratch = Path(proc.stdout.strip())
    assert scratch.parent == work and scratch.name.startswith("ws-"), proc.stderr[-2000:]
    assert list(tmp.iterdir()) == []   # nothing in the machine's temporary folder
    if end == "killed":   # no exit handler ran: the next run's sweep of dead workers' folders
        assert scratch.exists()
        sweep_stale_workspaces(work)
    assert not scratch.exists()
