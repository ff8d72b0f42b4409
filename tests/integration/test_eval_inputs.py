"""What a user sees around a run on the demo: reused run ids, --instance-ids, datasets derived from the demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.analysis.runs import load_runs
from issuebench.cli.main import app
from issuebench.demo import demo_tasks

pytestmark = pytest.mark.xdist_group("demo-eval")


def cli(*args: str):
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    assert "Traceback" not in result.output
    return result


def write_preds(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": "m", "model_patch": p}) + "\n"
                            for i, p in rows))
    return path


def test_a_reused_run_id_says_what_it_holds_and_the_report_agrees_with_the_summary(tmp_path):
    tasks = demo_tasks()
    out = str(tmp_path / "out")
    everything = write_preds(tmp_path / "all.jsonl", [(t.instance_id, t.patch) for t in tasks])
    assert cli("eval", "-d", "demo", "-p", str(everything), "--run-id", "same", "-o", out).exit_code == 0
    two = write_preds(tmp_path / "two.jsonl", [(tasks[0].instance_id, tasks[0].patch),
                                               (tasks[1].instance_id, "not a diff\n")])
    second = cli("eval", "-d", "demo", "-p", str(two), "--run-id", "same", "-o", out)
    assert second.exit_code == 0, second.output
    assert "1/2 resolved" in second.output
    assert f"also holds {len(tasks) - 2} instance folder(s)" in second.output
    assert "already held results for 2" in second.output
    [run] = load_runs([tmp_path / "out" / "m.same.json"])
    summary = json.loads((tmp_path / "out" / "m.same.json").read_text())
    assert run.resolved_ids == set(summary["resolved_ids"]) == {tasks[0].instance_id}
    assert any("not part of its run" in note for note in run.notes)
    report = cli("report", str(tmp_path / "out" / "m.same.json"), "--format", "json")
    assert report.exit_code == 0
    assert json.loads(report.output)["systems"][0]["resolved"] == 1


def test_instance_ids_without_a_prediction_are_named_as_such(tmp_path):
    tasks = demo_tasks()
    chosen, lacking = tasks[2].instance_id, tasks[3].instance_id
    preds = write_preds(tmp_path / "p.jsonl", [(t.instance_id, t.patch) for t in tasks if t.instance_id != lacking])
    result = cli("eval", "-d", "demo", "-p", str(preds), "-i", chosen, "-i", lacking, "-o", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert f"without a prediction: {lacking}" in result.output
    assert "not in the dataset" not in result.output  # the other predictions were only filtered out
    assert "1/1 resolved" in result.output


def test_datasets_derived_from_the_demo_find_its_repositories(tmp_path):
    derived = tmp_path / "reworded.jsonl"
    assert cli("perturb", "demo", "--reword", "-o", str(derived)).exit_code == 0
    task = demo_tasks()[4].instance_id
    result = cli("eval", "-d", str(derived), "-p", "gold", "-i", task, "--offline", "-o", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert "1/1 resolved" in result.output
    built = cli("envs", "build", "demo", "--offline", "-i", task)
    assert built.exit_code == 0, built.output
