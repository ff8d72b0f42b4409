"""eval end to end on the embedded demo dataset: real git, real uv environments, real bubblewrap."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from issuebench.datasets import gold_predictions
from issuebench.demo import demo_predictions, demo_repos_dir, demo_tasks, expected_mixed
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.models import InstanceStatus, Prediction

pytestmark = pytest.mark.xdist_group("demo-eval")


@pytest.fixture(scope="module")
def tasks():
    return demo_tasks()


def context(tmp_path: Path, run_id: str = "r", **kw):
    return build_context(EvalOptions(output_dir=tmp_path, run_id=run_id, repos_dir=demo_repos_dir(),
                                     timeout=120, **kw))


def test_gold_resolves_every_task_and_writes_reference_artifacts(tmp_path, tasks):
    assert len(tasks) >= 10
    result = run_evaluation(tasks, gold_predictions(tasks), context(tmp_path), workers=2)
    statuses = {r.instance_id: r.status for r in result.reports}
    assert set(statuses.values()) == {InstanceStatus.RESOLVED}, statuses
    summary = json.loads((tmp_path / "gold.r.json").read_text())
    assert summary["resolved_instances"] == len(tasks) and summary["error_ids"] == []
    inst = tmp_path / "logs" / "run_evaluation" / "r" / "gold" / tasks[0].instance_id
    for name in ("patch.diff", "eval.sh", "test_output.txt", "run_instance.log", "report.json"):
        assert (inst / name).is_file(), name
    report = json.loads((inst / "report.json").read_text())[tasks[0].instance_id]
    assert report["resolved"] is True and report["patch_successfully_applied"] is True
    assert sorted(report["tests_status"]["FAIL_TO_PASS"]["success"]) == sorted(tasks[0].FAIL_TO_PASS)


def test_empty_predictions_resolve_nothing(tmp_path, tasks):
    result = run_evaluation(tasks, demo_predictions("empty"), context(tmp_path), workers=2)
    assert {r.status for r in result.reports} == {InstanceStatus.EMPTY}
    summary = json.loads(next(tmp_path.glob("*.r.json")).read_text())
    assert summary["empty_patch_instances"] == len(tasks) and summary["resolved_instances"] == 0


def test_mixed_predictions_get_the_statuses_they_were_written_for(tmp_path, tasks):
    result = run_evaluation(tasks, demo_predictions("mixed"), context(tmp_path), workers=2)
    got = {r.instance_id: r.status.value for r in result.reports}
    assert got == expected_mixed()


def test_no_patch_means_fail_to_pass_tests_fail(tmp_path, tasks):
    """Without any fix, the FAIL_TO_PASS tests must fail: the dataset is not vacuous."""
    from issuebench.harness.instance import run_tests

    ctx = context(tmp_path)
    for task in tasks[:3]:
        run = run_tests(task, None, ctx)
        assert run.status is InstanceStatus.UNRESOLVED, run.reason
        assert all(run.status_map.get(t, None) is None or run.status_map[t].value in ("FAILED", "ERROR")
                   for t in task.FAIL_TO_PASS)


def test_rerun_is_cached_and_a_changed_patch_is_not_stale(tmp_path, tasks):
    task = tasks[0]
    gold = gold_predictions([task])
    first = run_evaluation([task], gold, context(tmp_path, "one"), workers=1).reports[0]
    assert first.status is InstanceStatus.RESOLVED
    t0 = time.monotonic()
    again = run_evaluation([task], gold, context(tmp_path, "one"), workers=1).reports[0]
    assert again.cache_key == first.cache_key and again.status is InstanceStatus.RESOLVED
    assert time.monotonic() - t0 < first.durations["total"] + 5
    log = (tmp_path / "logs/run_evaluation/one/gold" / task.instance_id / "run_instance.log").read_text()
    assert "reused" in log
    # Another run id with the same patch is served from the content-addressed result cache.
    other = run_evaluation([task], gold, context(tmp_path, "two"), workers=1).reports[0]
    assert other.status is InstanceStatus.RESOLVED and other.cache_key == first.cache_key
    # The same run id with a different patch must run again and get its own verdict.
    broken = Prediction(instance_id=task.instance_id, model_name_or_path="gold", model_patch="not a diff\n")
    changed = run_evaluation([task], [broken], context(tmp_path, "one"), workers=1).reports[0]
    assert changed.status is InstanceStatus.INVALID_PATCH


def test_killed_run_resumes_where_it_stopped(tmp_path, tasks):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "issuebench.cli.main", "eval", "--dataset", "demo", "--predictions", "gold",
           "--run-id", "resume", "--workers", "1", "--output", str(out), "--no-cache"]
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    model_dir = out / "logs" / "run_evaluation" / "resume" / "gold"
    deadline = time.monotonic() + 180

    def finished_instances() -> set[str]:
        # An instance writes into a hidden `.<id>.partial` folder until it is done: only named ones count.
        return {p.parent.name for p in model_dir.glob("*/result.json") if not p.parent.name.startswith(".")}

    while time.monotonic() < deadline and len(finished_instances()) < 2:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = finished_instances()
    assert 2 <= len(finished) < len(tasks)
    assert not (out / "gold.resume.json").exists()
    done = subprocess.run(cmd[:-1], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "gold.resume.json").read_text())
    assert summary["resolved_instances"] == len(tasks)
    for iid in finished:
        assert "reused" in (model_dir / iid / "run_instance.log").read_text()


def test_a_change_to_the_grading_code_is_never_served_an_old_verdict(tmp_path, tasks, monkeypatch):
    """The result cache is keyed on a digest of the code that reads and grades tests: a harness
    whose parser or grading changed re-runs the instance instead of reusing what the old code said."""
    task = tasks[0]
    gold = gold_predictions([task])
    first = run_evaluation([task], gold, context(tmp_path, "one"), workers=1).reports[0]
    monkeypatch.setattr("issuebench.harness.instance.verdict_code", lambda: "a-changed-parser")
    again = run_evaluation([task], gold, context(tmp_path, "one"), workers=1).reports[0]
    assert again.cache_key != first.cache_key and again.status is InstanceStatus.RESOLVED
    log = (tmp_path / "logs/run_evaluation/one/gold" / task.instance_id / "run_instance.log").read_text()
    assert "reused" not in log.split("evaluating")[-1] and "restored" not in log.split("evaluating")[-1]
    other = run_evaluation([task], gold, context(tmp_path, "two"), workers=1).reports[0]
    assert other.cache_key == again.cache_key  # the new code's verdict is the one the cache holds now
