"""infer end to end on demo tasks: the CLI, the real `openai` client against a loopback server that
injects faults, BM25 over the demo repositories, and eval grading the predictions resolved."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.datasets import load_predictions
from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.llm import LoopbackServer, ReplayModel, solve_script
from issuebench.models import InstanceStatus

pytestmark = pytest.mark.xdist_group("demo-eval")


def test_infer_cli_over_http_with_faults_then_eval_resolves(tmp_path, monkeypatch):
    tasks = demo_tasks()[3:6]
    ids = [t.instance_id for t in tasks]
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    with LoopbackServer(ReplayModel(solve_script(tasks, mode="infer")), faults=["429", "500", "429"]) as server:
        res = CliRunner().invoke(app, ["infer", "-d", "demo", "-o", str(tmp_path / "run"), "-m", "replay",
                                       "--base-url", server.url, "--workers", "2", "--write-text",
                                       *[arg for i in ids for arg in ("--instance-ids", i)]])
    assert res.exit_code == 0, res.output
    assert server.fault_log == ["429", "500", "429"]
    preds = load_predictions(tmp_path / "run" / "preds.jsonl", tasks).predictions
    assert sorted(p.instance_id for p in preds) == sorted(ids)
    rows = [json.loads(line) for line in (tmp_path / "run" / "preds.jsonl").read_text().splitlines()]
    assert all(r["apply_check"] == "applied" and r["cost"] > 0 and r["steps"] == 1 for r in rows)
    text = [json.loads(line) for line in (tmp_path / "run" / "text.jsonl").read_text().splitlines()]
    assert sorted(r["instance_id"] for r in text) == sorted(ids) and all("<issue>" in r["text"] for r in text)
    ctx = build_context(EvalOptions(output_dir=tmp_path / "eval", run_id="r", repos_dir=demo_repos_dir(),
                                    timeout=60, python_fallback="nearest"))
    graded = run_evaluation(tasks, preds, ctx, workers=2)
    assert {r.status for r in graded.reports} == {InstanceStatus.RESOLVED}
    report = CliRunner().invoke(app, ["report", str(tmp_path / "eval" / "replay.r.json"), "-f", "json"])
    assert report.exit_code == 0, report.output
    system = json.loads(report.output)["systems"][0]
    assert system["resolved"] == 3 and system["total_cost"] == pytest.approx(sum(r["cost"] for r in rows))


def test_a_refused_request_leaves_no_prediction_and_says_so(tmp_path, monkeypatch):
    task = demo_tasks()[0]
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    with LoopbackServer(ReplayModel(solve_script([task], mode="infer")), faults=["400"]) as server:
        res = CliRunner().invoke(app, ["infer", "-d", "demo", "-o", str(tmp_path), "-m", "replay",
                                       "--base-url", server.url, "--instance-ids", task.instance_id])
    assert res.exit_code == 0, res.output
    assert "stopped by the infrastructure" in res.output
    record = json.loads((tmp_path / "prompts" / f"{task.instance_id}.json").read_text())
    assert record["status"] == "api_error" and "HTTP 400" in record["reason"]
    assert not (tmp_path / "preds.jsonl").exists()


def test_no_resume_twice_leaves_one_prediction_per_instance(tmp_path):
    tasks = demo_tasks()[3:5]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(solve_script(tasks, mode="infer")))
    args = ["infer", "-d", "demo", "-o", str(tmp_path / "run"), "-m", f"replay:{script}", "--no-resume",
            *[arg for t in tasks for arg in ("-i", t.instance_id)]]
    for _ in range(2):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
    rows = [json.loads(line)["instance_id"] for line in (tmp_path / "run" / "preds.jsonl").read_text().splitlines()]
    assert sorted(rows) == sorted(t.instance_id for t in tasks)
    assert len(load_predictions(tmp_path / "run" / "preds.jsonl", tasks).predictions) == 2  # what eval reads
    # Resuming asks for none of them again and adds no row.
    res = CliRunner().invoke(app, [a for a in args if a != "--no-resume"])
    assert res.exit_code == 0 and "2 instance(s) already in" in res.output, res.output
    assert len((tmp_path / "run" / "preds.jsonl").read_text().splitlines()) == 2
