"""An agent's steps, end to end: preds.jsonl written by the agent's own writer, graded by a real eval
on demo tasks, then `issuebench report --predictions` shows them in markdown, JSON, CSV and HTML."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.agent.loop import Trajectory
from issuebench.agent.run import prediction_record
from issuebench.agent.store import RunFolder
from issuebench.cli.main import app
from issuebench.datasets import load_predictions
from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.llm import Usage
from issuebench.models import InstanceStatus

pytestmark = pytest.mark.xdist_group("demo-eval")
MODEL = "org/agent-x"


def report(*args: str) -> str:
    res = CliRunner().invoke(app, ["report", *args])
    assert res.exit_code == 0, res.output
    return res.output


def test_report_shows_the_agents_steps_from_its_predictions(tmp_path: Path):
    solved, stopped, unknown = demo_tasks()[:3]
    agent = RunFolder(tmp_path / "agent")
    # Solved in 4 steps; stopped by the step limit with nothing to show; a row that states no steps.
    agent.append_prediction(prediction_record(Trajectory(
        solved.instance_id, MODEL, exit_status="submitted", steps=4, usage=Usage(calls=4, cost=0.04),
        patch=solved.patch)))
    agent.append_prediction(prediction_record(Trajectory(
        stopped.instance_id, MODEL, exit_status="step_limit", steps=10, usage=Usage(calls=10, cost=0.1))))
    agent.append_prediction({"instance_id": unknown.instance_id, "model_name_or_path": MODEL, "model_patch": ""})
    tasks = [solved, stopped, unknown]
    preds = load_predictions(agent.preds_path, tasks).predictions
    ctx = build_context(EvalOptions(output_dir=tmp_path / "eval", run_id="r", repos_dir=demo_repos_dir(),
                                    timeout=120, python_fallback="nearest"))
    graded = {r.instance_id: r.status for r in run_evaluation(tasks, preds, ctx, workers=1).reports}
    assert graded == {solved.instance_id: InstanceStatus.RESOLVED, stopped.instance_id: InstanceStatus.EMPTY,
                      unknown.instance_id: InstanceStatus.EMPTY}
    summary = tmp_path / "eval" / f"{MODEL.replace('/', '__')}.r.json"
    given = [str(summary), "--predictions", str(agent.preds_path)]

    md = report(*given, "--format", "md")
    assert "| steps/task |" in md and "| 0.0700 | 0.1400 | yes | 7.0 |" in md   # headline: mean of 4 and 10
    assert (f"| org__agent-x | 2/3 | 7.0 | 7 | 4.0 (4) | 10.0 (10) | 1: {stopped.instance_id} | "
            "step_limit 1, submitted 1 |") in md
    assert f"| org__agent-x | {solved.instance_id} | resolved | 0.0400 | 4 | submitted |" in md
    assert f"| org__agent-x | {stopped.instance_id} | empty | 0.1000 | 10 | step_limit |" in md
    assert f"| org__agent-x | {unknown.instance_id} | empty |  |  |  |" in md   # blank, not 0
    assert "steps known for 2 of 3 instances" in md

    (system,) = json.loads(report(*given, "--format", "json"))["systems"]
    steps = system["steps"]
    assert (steps["known"], steps["all"]["mean"], steps["all"]["median"]) == (2, 7.0, 7.0)
    assert steps["resolved"]["mean"] == 4.0 and steps["unresolved"]["mean"] == 10.0
    assert steps["step_limit"] == [stopped.instance_id]
    by_id = {r["instance_id"]: r for r in system["instances"]}
    assert {i: r["steps"] for i, r in by_id.items()} == {solved.instance_id: 4, stopped.instance_id: 10,
                                                         unknown.instance_id: None}
    assert by_id[stopped.instance_id]["agent_exit"] == "step_limit"

    (row,) = csv.DictReader(io.StringIO(report(*given, "--format", "csv")))
    assert (row["steps_known"], row["median_steps"], row["step_limit_ids"]) == ("2", "7", stopped.instance_id)

    html = report(*given, "--format", "html")
    assert "<h2>Agent steps</h2>" in html and "<th>steps/task</th>" in html
    assert (f"<td>{stopped.instance_id}</td><td>empty</td><td>0.1000</td><td>10</td><td>step_limit</td>"
            in html)

    # Without the predictions the run says nothing about steps: no figures, a blank cell.
    plain = report(str(summary), "--format", "md")
    assert "Agent steps" not in plain and "| 0.0700 | 0.1400 | yes |  |" in plain
