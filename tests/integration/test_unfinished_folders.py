"""An instance folder without result.json is no verdict: report and regrade leave it out and say so.

Harnesses before the hidden staging folder left such folders when interrupted; a crash still
leaves a hidden `.<id>.partial`. Folders of the reference harness keep the reference's rule."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from issuebench.analysis.runs import load_runs
from issuebench.datasets import gold_predictions
from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.models import Task
from issuebench.regrade import regrade

pytestmark = pytest.mark.xdist_group("demo-eval")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A real run of four demo tasks with their gold patches: the model folder."""
    out = tmp_path_factory.mktemp("run")
    tasks = demo_tasks()[:4]
    ctx = build_context(EvalOptions(output_dir=out, run_id="r", repos_dir=demo_repos_dir(), timeout=120,
                                    python_fallback="nearest"))
    reports = run_evaluation(tasks, gold_predictions(tasks), ctx, workers=2).reports
    assert {r.status.value for r in reports} == {"resolved"}
    return out / "logs/run_evaluation/r/gold"


def as_interrupted(finished_run: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """A copy of the run whose last three instances look as interrupted runs left them."""
    folder = tmp_path / "logs/run_evaluation/r/gold"
    shutil.copytree(finished_run, folder)
    ids = sorted(p.name for p in folder.iterdir())
    # Killed during its tests: the verdict files went, a cut log with this run's markers stayed.
    for name in ("result.json", "report.json"):
        (folder / ids[1] / name).unlink()
    # Stopped before its tests ran: what evaluate_instance had written by then.
    early = folder / ids[2]
    for item in early.iterdir():
        item.unlink()
    (early / "patch.diff").write_text("diff --git a/x b/x\n")
    (early / "eval.sh").write_text("# tests did not run\n")
    (early / "test_output.txt").write_text("")
    (early / "run_instance.log").write_text("2024-05-01 12:00:00 [+   0.01s] evaluating it for gold (cache key 0)\n")
    # A crash of today's harness: the hidden folder it was writing in.
    shutil.copytree(folder / ids[3], folder / f".{ids[3]}.partial")
    (folder / f".{ids[3]}.partial" / "result.json").unlink()
    shutil.rmtree(folder / ids[3])
    return folder, ids


def test_report_leaves_out_folders_without_result_json_and_says_so(finished_run, tmp_path):
    folder, ids = as_interrupted(finished_run, tmp_path)
    (run,) = load_runs([folder.parent])
    assert {i: r.status for i, r in run.instances.items()} == {ids[0]: "resolved"}
    assert any("2 instance folder(s) without result.json" in n and ids[1] in n and ids[2] in n for n in run.notes)
    shown = subprocess.run([sys.executable, "-m", "issuebench", "report", str(folder)], capture_output=True,
                           text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "without result.json" in shown.stdout and "error" not in shown.stdout


def test_regrade_leaves_out_folders_without_result_json_and_says_so(finished_run, tmp_path):
    folder, ids = as_interrupted(finished_run, tmp_path)
    result = regrade(folder.parent, demo_tasks())
    assert [r.instance_id for r in result.reports] == [ids[0]]
    assert sorted(result.unfinished) == [ids[1], ids[2]]
    shown = subprocess.run([sys.executable, "-m", "issuebench", "regrade", "--logs", str(folder), "--dataset", "demo"],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "regraded 1 log(s): 1 resolved" in shown.stdout and "apply_failed" not in shown.stdout
    assert "2 instance folder(s) without result.json" in shown.stderr


def test_a_reference_folder_without_report_json_is_still_the_references_error(tmp_path):
    folder = tmp_path / "logs/run_evaluation/ref/m/astropy__astropy-12907"
    folder.mkdir(parents=True)
    (folder / "run_instance.log").write_text("2024-05-01 12:00:00,123 - INFO - Patch Apply Failed:\n")
    (folder / "test_output.txt").write_text(">>>>> Patch Apply Failed\n")
    (run,) = load_runs([folder.parent])
    assert run.instances["astropy__astropy-12907"].status == "error"
    task = Task.model_validate({"instance_id": "astropy__astropy-12907", "repo": "astropy/astropy",
                                "base_commit": "0" * 40, "patch": "", "test_patch": "", "problem_statement": "",
                                "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": []})
    result = regrade(folder.parent, [task])
    assert [r.status.value for r in result.reports] == ["apply_failed"] and result.unfinished == []
