"""A row without `version` is evaluated with the version read from its repository, said in the
result's notes and in run_instance.log."""

from __future__ import annotations

import pytest

from issuebench.datasets import gold_predictions
from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.harness import EvalOptions, artifacts, build_context, run_evaluation
from issuebench.models import InstanceStatus

pytestmark = pytest.mark.xdist_group("demo-eval")


def test_a_row_without_version_gets_it_from_the_repository(tmp_path):
    task = next(t for t in demo_tasks() if t.instance_id == "issuebench-demo__tinycalc-3")
    assert task.version == "0.2"
    bare = task.model_copy(update={"version": None})
    ctx = build_context(EvalOptions(output_dir=tmp_path, run_id="noversion", repos_dir=demo_repos_dir(),
                                    timeout=120, use_cache=False))
    (report,) = run_evaluation([bare], gold_predictions([bare]), ctx, workers=1).reports
    assert report.status is InstanceStatus.RESOLVED
    note = next(n for n in report.notes if n.startswith("version "))
    assert note.startswith("version 0.2:") and "src/tinycalc/__init__.py" in note
    inst_dir = ctx.layout.instance_dir(report.model_name_or_path, task.instance_id)
    assert note in (inst_dir / "run_instance.log").read_text()
    assert note in artifacts.read_instance_result(inst_dir).notes
