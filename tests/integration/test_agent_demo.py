"""The agent end to end on demo tasks: the real `openai` client over loopback HTTP (with injected
faults), commands in the real sandbox, predictions graded by eval, limits across instances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.agent import AgentConfig, RunFolder, run_agent
from issuebench.cli.main import app
from issuebench.datasets import load_predictions
from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.llm import LoopbackServer, OpenAIModel, ReplayModel, RetryPolicy, solve_script
from issuebench.llm.scripts import SUBMIT_SENTINEL, conversation_key
from issuebench.models import InstanceStatus

pytestmark = pytest.mark.xdist_group("demo-eval")
FAST = RetryPolicy(retries=3, backoff=0.01, max_backoff=0.05)


@pytest.fixture(scope="module")
def tasks():
    return demo_tasks()[:3]


def context(tmp_path: Path, **kw):
    options = {"timeout": 60, "python_fallback": "nearest", **kw}
    return build_context(EvalOptions(output_dir=tmp_path / "eval", run_id="r", repos_dir=demo_repos_dir(),
                                     **options))


def test_replay_agent_over_http_solves_tasks_despite_api_faults_and_eval_resolves_them(tmp_path, tasks):
    ctx = context(tmp_path)
    with LoopbackServer(ReplayModel(solve_script(tasks)), faults=["429", "500", "slow:1.5", "503"]) as server:
        model = OpenAIModel("replay", base_url=server.url, timeout=0.5, retry=FAST)
        result = run_agent(tasks, model, ctx, tmp_path / "run", config=AgentConfig(command_timeout=30), workers=2)
    assert [r["exit_status"] for r in result.trajectories] == ["submitted"] * 3
    assert server.fault_log == ["429", "500", "slow:1.5", "503"]
    preds = load_predictions(tmp_path / "run" / "preds.jsonl", tasks).predictions
    assert {p.instance_id for p in preds} == {t.instance_id for t in tasks}
    for p in preds:
        assert p.cost and p.cost > 0 and p.usage["steps"] == 4 and p.usage["calls"] == 4
    graded = run_evaluation(tasks, preds, ctx, workers=2)
    assert {r.status for r in graded.reports} == {InstanceStatus.RESOLVED}
    assert all(r.cost and r.cost > 0 for r in graded.reports)
    # The trajectory is a plain message list, and `agent show` prints it for a person.
    traj = json.loads((tmp_path / "run" / "trajectories" / f"{tasks[0].instance_id}.json").read_text())
    assert traj["messages"][-1]["content"].endswith(f"echo {SUBMIT_SENTINEL}\n```")
    shown = CliRunner().invoke(app, ["agent", "show", tasks[0].instance_id, "-o", str(tmp_path / "run")])
    assert shown.exit_code == 0 and "submitted" in shown.output and "patch (from git)" in shown.output


def test_an_endpoint_that_keeps_failing_is_an_infrastructure_status_and_a_rerun_retries(tmp_path, tasks):
    ctx = context(tmp_path)
    task = tasks[0]
    with LoopbackServer(ReplayModel(solve_script([task])), faults=["500"] * 4) as server:
        model = OpenAIModel("replay", base_url=server.url, retry=RetryPolicy(retries=3, backoff=0.01))
        first = run_agent([task], model, ctx, tmp_path / "run")
        assert first.trajectories[0]["exit_status"] == "api_error"
        assert "HTTP 500" in first.trajectories[0]["reason"]
        assert not (tmp_path / "run" / "preds.jsonl").exists()  # no failed task, no empty prediction
        second = run_agent([task], model, ctx, tmp_path / "run")  # the faults are used up
    assert second.trajectories[0]["exit_status"] == "submitted"
    assert RunFolder(tmp_path / "run").predicted_ids() == {task.instance_id}


def test_total_cost_limit_stops_new_instances_and_resume_runs_only_what_is_left(tmp_path, tasks):
    ctx = context(tmp_path)
    # Every call costs $0.01 (10,000 prompt tokens at the replay price of $1/M): 4 calls a task.
    script = solve_script(tasks)
    for conv in script["conversations"]:
        conv["answers"] = [{"content": a, "prompt_tokens": 10_000, "completion_tokens": 0} for a in conv["answers"]]
    model = ReplayModel(script)
    out = tmp_path / "run"
    first = run_agent(tasks, model, ctx, out, total_cost_limit=0.05, workers=1)
    statuses = [r["exit_status"] for r in first.trajectories]
    assert statuses == ["submitted", "submitted", "not_started"], statuses  # 0.04 < 0.05 lets the 2nd start
    assert first.spent == pytest.approx(0.08)
    assert RunFolder(out).predicted_ids() == {tasks[0].instance_id, tasks[1].instance_id}
    again = run_agent(tasks, model, ctx, out, total_cost_limit=0.5, workers=1)
    assert again.skipped == [tasks[0].instance_id, tasks[1].instance_id]
    assert [r["instance_id"] for r in again.trajectories] == [tasks[2].instance_id]
    assert again.spent == pytest.approx(0.12)  # earlier spending counts against the total


def test_commands_run_offline_under_a_time_limit_in_the_task_environment(tmp_path, tasks):
    task = tasks[0]
    answers = ["```bash\npython -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)' "
               "&& echo ONLINE || echo OFFLINE\n```",
               "```bash\nsleep 30\n```",
               "```bash\npython -c 'import sys; print(sys.prefix)'\n```",
               f"```bash\necho {SUBMIT_SENTINEL}\n```"]
    model = ReplayModel({"conversations": [{"match": conversation_key(task), "answers": answers}]})
    ctx = context(tmp_path, timeout=3)
    result = run_agent([task], model, ctx, tmp_path / "run", config=AgentConfig(command_timeout=3))
    msgs = result.trajectories[0]["messages"]
    assert "OFFLINE" in msgs[3]["content"]
    assert "The command was stopped" in msgs[5]["content"]
    assert "/envs/" in msgs[7]["content"]  # the task's own environment, not the host's Python
    assert result.trajectories[0]["patch"] == ""  # it changed nothing


def _costed(script: dict) -> dict:
    """Every call costs $0.01 (10,000 prompt tokens at the replay price of $1/M)."""
    for conv in script["conversations"]:
        conv["answers"] = [{"content": a, "prompt_tokens": 10_000, "completion_tokens": 0} for a in conv["answers"]]
    return script


def test_no_resume_twice_from_the_cli_leaves_one_prediction_per_instance(tmp_path, tasks):
    chosen = tasks[:2]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(_costed(solve_script(chosen))))
    out = tmp_path / "run"
    args = ["agent", "-d", "demo", "-o", str(out), "--model", f"replay:{script}", "--no-resume", "--timeout", "60",
            *[arg for t in chosen for arg in ("-i", t.instance_id)]]
    for _ in range(2):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        # 2 instances x 4 calls at $0.01: the earlier run's instances are the ones run again.
        assert "$0.0800 spent ($0.0800 with earlier runs of this folder)" in " ".join(res.output.split())
    rows = [json.loads(line)["instance_id"] for line in (out / "preds.jsonl").read_text().splitlines()]
    assert sorted(rows) == sorted(t.instance_id for t in chosen)
    assert len(load_predictions(out / "preds.jsonl", chosen).predictions) == 2  # what eval reads


def test_an_instance_run_again_counts_once_in_what_the_folder_spent(tmp_path, tasks):
    ctx = context(tmp_path)
    task = tasks[0]
    with LoopbackServer(ReplayModel(_costed(solve_script([task]))), faults=["ok", "400"]) as server:
        model = OpenAIModel("replay", base_url=server.url, retry=RetryPolicy(retries=0))
        first = run_agent([task], model, ctx, tmp_path / "run")
        assert first.trajectories[0]["exit_status"] == "api_error" and first.spent == pytest.approx(0.01)
        second = run_agent([task], model, ctx, tmp_path / "run")  # resumes: the failed instance again
    assert second.trajectories[0]["exit_status"] == "submitted"
    # Its new trajectory ($0.04) replaces the failed one's ($0.01): the folder holds $0.04, once.
    assert second.spent == pytest.approx(0.04) == RunFolder(tmp_path / "run").total_cost()
