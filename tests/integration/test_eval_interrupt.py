"""Ctrl-C during eval: a real `issuebench eval` process gets SIGINT from its terminal's process group."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.models import InstanceStatus, Task
from tests.interruptible import interruptible

pytestmark = pytest.mark.xdist_group("demo-eval")


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def blocking_patch(task: Task, tmp_path: Path) -> str:
    """The task's gold patch, plus a line that makes importing the fixed module sleep for 10 minutes."""
    clone = tmp_path / "clone"
    _git("clone", "--quiet", str(demo_repos_dir() / task.repo.replace("/", "__")), str(clone), cwd=tmp_path)
    _git("checkout", "--quiet", task.base_commit, cwd=clone)
    (tmp_path / "gold.diff").write_text(task.patch)
    _git("apply", str(tmp_path / "gold.diff"), cwd=clone)
    changed = clone / _git("diff", "--name-only", cwd=clone).split()[0]
    changed.write_text(changed.read_text() + "\nimport time\ntime.sleep(600)\n")
    return _git("diff", cwd=clone)


def write_predictions(path: Path, tasks: list[Task], first_patch: str) -> Path:
    rows = [{"instance_id": t.instance_id, "model_name_or_path": "m", "model_patch": t.patch} for t in tasks]
    rows[0]["model_patch"] = first_patch
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_ctrl_c_keeps_finished_instances_discards_the_one_in_flight_and_a_rerun_resumes(tmp_path):
    tasks = demo_tasks()
    blocked = tasks[0].instance_id
    preds = write_predictions(tmp_path / "p.jsonl", tasks, blocking_patch(tasks[0], tmp_path))
    out = tmp_path / "out"
    cmd = interruptible("-m", "issuebench.cli.main", "eval", "--dataset", "demo", "--predictions", str(preds),
                        "--run-id", "r", "--workers", "2", "--timeout", "120", "--output", str(out))
    # Its own session, so that the signal goes to every process of the run, as a terminal's Ctrl-C does.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "COLUMNS": "200"})
    assert proc.stdout is not None
    finished = []
    for line in proc.stdout:  # not a terminal: one line per finished instance, as it finishes
        if line.startswith("["):
            finished.append(line)
        if len(finished) == len(tasks) - 1:
            break
    assert len(finished) == len(tasks) - 1, "".join(finished)
    model_dir = out / "logs" / "run_evaluation" / "r" / "m"
    assert not (model_dir / blocked / "result.json").exists()  # still sleeping in its sandbox
    started = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("eval did not stop after SIGINT")
    assert proc.returncode == 130, err
    assert "interrupted; rerun to resume" in err
    assert "Traceback" not in err
    # Stopping did not wait for the 10-minute sleep (nor for the 120 s limit) to end.
    assert time.monotonic() - started < 60
    # The finished instances are kept; the one in flight left no verdict, nor a summary.
    results = {p.parent.name: json.loads(p.read_text())["status"] for p in model_dir.glob("*/result.json")
               if not p.parent.name.startswith(".")}
    assert blocked not in results
    assert len(results) == len(tasks) - 1 and set(results.values()) == {InstanceStatus.RESOLVED.value}
    assert not (out / "m.r.json").exists()

    # The rerun resumes: the kept ones are reused, the discarded one (now with its gold patch) runs.
    write_predictions(preds, tasks, tasks[0].patch)
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    summary = json.loads((out / "m.r.json").read_text())
    assert summary["resolved_instances"] == len(tasks)
    assert "reused" in (model_dir / tasks[1].instance_id / "run_instance.log").read_text()


@pytest.mark.parametrize("status", ["error", "env_failed", "sandbox_failed"])
def test_a_machine_fault_in_the_run_folder_is_retried_not_reused(tmp_path, status):
    """The run folder's own result.json follows the shared cache's rule (faults of the machine are retried)."""
    from issuebench.datasets import gold_predictions
    from issuebench.harness import EvalOptions, build_context, run_evaluation

    task = demo_tasks()[1]
    ctx = build_context(EvalOptions(output_dir=tmp_path, run_id="r", repos_dir=demo_repos_dir(), timeout=120,
                                    python_fallback="nearest"))
    first = run_evaluation([task], gold_predictions([task]), ctx, workers=1).reports[0]
    result = tmp_path / "logs/run_evaluation/r/gold" / task.instance_id / "result.json"
    data = json.loads(result.read_text())
    assert data["cache_key"] == first.cache_key
    data.update(status=status, reason="no workspace: git init --quiet failed")
    result.write_text(json.dumps(data))
    again = run_evaluation([task], gold_predictions([task]), ctx, workers=1).reports[0]
    assert again.status is InstanceStatus.RESOLVED
    assert json.loads(result.read_text())["status"] == InstanceStatus.RESOLVED.value
