"""Strictness that helps: what a user's file or command line means is taken, what means nothing is
said in one line (item 4 of the command-line issue). The graded side: tests/integration/test_eval_leniency.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.datasets import load_predictions, load_tasks

ISSUEBENCH = Path(sys.executable).with_name("issuebench")
ROW = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "patch": "", "test_patch": "",
       "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["t2"], "problem_statement": "add() is wrong"}


def dataset(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({**ROW, "instance_id": f"o__r-{i}"}) + "\n" for i in range(1, n + 1)))
    return path


def write_run(root: Path, name: str, ids: list[str]) -> Path:
    for iid in ids:
        d = root / name / iid
        d.mkdir(parents=True)
        ts = {"FAIL_TO_PASS": {"success": ["t"], "failure": []}, "PASS_TO_PASS": {"success": [], "failure": []}}
        (d / "report.json").write_text(json.dumps({iid: {"patch_is_None": False, "patch_exists": True,
                                                         "patch_successfully_applied": True, "resolved": True,
                                                         "tests_status": ts}}))
    return root / name


def test_a_predictions_file_ending_in_a_blank_line_is_taken_and_a_missing_model_name_is_noted(tmp_path):
    tasks = load_tasks(dataset(tmp_path / "d.jsonl", 2))
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"instance_id": "o__r-1", "model_patch": ""}) + "\n"
                     + json.dumps({"instance_id": "o__r-2", "model_name_or_path": "m", "model_patch": ""}) + "\n\n")
    loaded = load_predictions(preds, tasks)
    assert [p.instance_id for p in loaded.predictions] == ["o__r-1", "o__r-2"]
    assert loaded.unnamed == ["o__r-1"] and loaded.predictions[0].model_name_or_path == "unknown"


def test_compare_of_runs_without_a_shared_task_exits_2_in_one_line(tmp_path):
    a = write_run(tmp_path, "a", ["o__r-1", "o__r-2"])
    b = write_run(tmp_path, "b", ["o__r-3"])
    result = CliRunner().invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert "share no task" in line and str(a) in line and str(b) in line
    shared = CliRunner().invoke(app, ["compare", str(a), str(write_run(tmp_path, "c", ["o__r-2"]))])
    assert shared.exit_code == 0, shared.output


def test_instance_ids_by_commas_or_by_spaces_on_the_real_command(tmp_path):
    data = dataset(tmp_path / "d.jsonl", 4)
    for ids in (["o__r-1,o__r-3"], ["o__r-1", "o__r-3"], ["o__r-1,", "o__r-3"]):
        proc = subprocess.run([str(ISSUEBENCH), "audit", str(data), "-i", *ids], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("2 tasks"), (ids, proc.stdout[:200])
