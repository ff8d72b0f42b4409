"""Faults during a run: one instance's failure is its own, the run goes on, nothing is left behind."""

from __future__ import annotations

import errno
import shutil
from dataclasses import replace

import pytest

from issuebench import files
from issuebench.datasets import gold_predictions
from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.models import InstanceStatus

pytestmark = pytest.mark.xdist_group("demo-eval")


def test_a_full_disk_fails_one_instance_and_the_run_goes_on(tmp_path, monkeypatch):
    tasks = demo_tasks()[:4]
    victim = tasks[1].instance_id
    real_write = files.write_text_atomic

    def disk_full_for_victim(path, text):
        if victim in str(path) and path.name == "test_output.txt":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(path, text)

    monkeypatch.setattr("issuebench.harness.instance.write_text_atomic", disk_full_for_victim)
    ctx = build_context(EvalOptions(output_dir=tmp_path, run_id="faults", repos_dir=demo_repos_dir(),
                                    timeout=120, use_cache=False))
    result = run_evaluation(tasks, gold_predictions(tasks), ctx, workers=2)
    by_id = {r.instance_id: r for r in result.reports}
    assert by_id[victim].status is InstanceStatus.ERROR
    assert "No space left on device" in by_id[victim].reason
    assert all(r.status is InstanceStatus.RESOLVED for i, r in by_id.items() if i != victim)
    # Nothing is cached for the failed instance: a rerun after freeing space runs it again.
    monkeypatch.setattr("issuebench.harness.instance.write_text_atomic", real_write)
    again = run_evaluation(tasks, gold_predictions(tasks), build_context(EvalOptions(
        output_dir=tmp_path, run_id="faults", repos_dir=demo_repos_dir(), timeout=120)), workers=2)
    assert {r.status for r in again.reports} == {InstanceStatus.RESOLVED}


def test_workspaces_are_removed_after_every_instance(tmp_path):
    # The run's own workspaces folder: the shared one also holds the workspaces of whatever else
    # runs beside this test (another test worker, a run on the same cache), which come and go.
    tasks = demo_tasks()[:3]
    work = tmp_path / "work"
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="clean", repos_dir=demo_repos_dir(),
                                    timeout=120, use_cache=False))
    # Kept on request, they land there: the folder checked below is the one the run uses.
    kept = run_evaluation(tasks[:1], gold_predictions(tasks[:1]), replace(ctx, workspaces_dir=work, options=replace(ctx.options, keep_workspaces=True)))
    assert kept.reports[0].status is InstanceStatus.RESOLVED, kept.reports[0].reason
    assert len(list(work.glob("ws-*"))) == 1
    shutil.rmtree(work)
    result = run_evaluation(tasks, gold_predictions(tasks), replace(ctx, workspaces_dir=work), workers=2)
    assert {r.status for r in result.reports} == {InstanceStatus.RESOLVED}
    assert list(work.iterdir()) == []
