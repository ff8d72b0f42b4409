"""The agent loop with a replay model and a stand-in shell: limits, format errors, truncation, submission."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from issuebench.agent import Agent, AgentConfig, CostLedger
from issuebench.agent.loop import truncate
from issuebench.llm import ReplayModel
from issuebench.llm.scripts import SUBMIT_SENTINEL
from issuebench.models import Task

TASK = Task(instance_id="o__r-1", repo="o/r", base_commit="0" * 40, problem_statement="The parser drops commas.")


@dataclass
class Obs:
    returncode: int
    output: str
    status: str = "ok"
    reason: str = ""


class FakeShell:
    """Echoes what `echo` would print, and records every command it was given."""

    def __init__(self, outputs: dict[str, str] | None = None) -> None:
        self.commands: list[str] = []
        self.outputs = outputs or {}

    def execute(self, command: str) -> Obs:
        self.commands.append(command)
        if command.startswith("echo "):
            return Obs(0, command.removeprefix("echo ") + "\n")
        if command in self.outputs:
            return Obs(0, self.outputs[command])
        if command == "sleep 100":
            return Obs(None, "", "timeout", "ran past the 5 s limit")  # type: ignore[arg-type]
        return Obs(0, f"ran {command}\n")


def bash(cmd: str) -> str:
    return f"THOUGHT: go.\n\n```bash\n{cmd}\n```"


def model(answers: list, **usage) -> ReplayModel:
    scripted = [{"content": a, **usage} if usage else a for a in answers]
    return ReplayModel({"model": "replay", "conversations": [{"match": "parser drops", "answers": scripted}]})


def test_submits_on_the_sentinel_and_keeps_every_message() -> None:
    shell = FakeShell()
    traj = Agent(model([bash("ls"), bash(f"echo {SUBMIT_SENTINEL}")]), AgentConfig()).run(TASK, shell)
    assert traj.exit_status == "submitted" and traj.steps == 2
    assert shell.commands == ["ls", f"echo {SUBMIT_SENTINEL}"]
    assert [m["role"] for m in traj.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert "The parser drops commas." in traj.messages[1]["content"]
    assert "<returncode>0</returncode>" in traj.messages[3]["content"] and "ran ls" in traj.messages[3]["content"]


def test_step_limit_holds_exactly() -> None:
    replay = model([bash("ls")])  # never submits
    traj = Agent(replay, AgentConfig(step_limit=7, cost_limit=0)).run(TASK, FakeShell())
    assert traj.exit_status == "step_limit" and traj.steps == 7 and replay.total.calls == 7


def test_cost_limit_holds_exactly_and_no_call_crosses_it() -> None:
    # Each call: 10,000 prompt tokens at $1/M = $0.01.
    replay = model([bash("ls")], prompt_tokens=10_000, completion_tokens=0)
    traj = Agent(replay, AgentConfig(step_limit=0, cost_limit=0.035)).run(TASK, FakeShell())
    assert traj.exit_status == "cost_limit"
    assert traj.steps == 3 and traj.usage.cost == pytest.approx(0.03) and traj.usage.cost <= 0.035
    # A limit that is an exact multiple is reached, not passed.
    traj = Agent(replay, AgentConfig(step_limit=0, cost_limit=0.05)).run(TASK, FakeShell())
    assert traj.steps == 5 and traj.usage.cost == pytest.approx(0.05)


def test_the_ledger_sees_every_call() -> None:
    ledger = CostLedger(limit=0.02)
    replay = model([bash("ls"), bash(f"echo {SUBMIT_SENTINEL}")], prompt_tokens=10_000, completion_tokens=0)
    Agent(replay, AgentConfig(), ledger).run(TASK, FakeShell())
    assert ledger.spent == pytest.approx(0.02) and ledger.exhausted()


def test_an_answer_without_exactly_one_command_is_sent_back() -> None:
    two = "```bash\nls\n```\nand\n```bash\npwd\n```"
    shell = FakeShell()
    traj = Agent(model(["no command here", two, bash(f"echo {SUBMIT_SENTINEL}")]), AgentConfig()).run(TASK, shell)
    assert traj.exit_status == "submitted" and traj.steps == 3
    assert shell.commands == [f"echo {SUBMIT_SENTINEL}"]  # nothing ran for the malformed answers
    assert "held 0 bash code blocks" in traj.messages[3]["content"]
    assert "held 2 bash code blocks" in traj.messages[5]["content"]


def test_long_output_is_cut_in_the_middle_with_a_note() -> None:
    big = "".join(f"line {i}\n" for i in range(5000))
    shell = FakeShell({"cat big": big})
    traj = Agent(model([bash("cat big"), bash(f"echo {SUBMIT_SENTINEL}")]), AgentConfig(output_chars=1000)).run(TASK, shell)
    obs = traj.messages[3]["content"]
    assert "line 0\n" in obs and "line 4999\n" in obs and "line 2500\n" not in obs
    assert f"The output was {len(big)} characters long" in obs and "characters elided" in obs
    assert len(obs) < 1600
    shown, note = truncate("short", 1000)
    assert (shown, note) == ("short", "")


def test_a_command_stopped_by_a_limit_is_reported_to_the_model() -> None:
    traj = Agent(model([bash("sleep 100"), bash(f"echo {SUBMIT_SENTINEL}")]), AgentConfig()).run(TASK, FakeShell())
    assert "The command was stopped: ran past the 5 s limit" in traj.messages[3]["content"]
    assert traj.exit_status == "submitted"


def test_the_sentinel_must_start_the_output() -> None:
    shell = FakeShell({"grep x": f"notes: {SUBMIT_SENTINEL}\n"})
    replay = model([bash("grep x")])
    traj = Agent(replay, AgentConfig(step_limit=2)).run(TASK, shell)
    assert traj.exit_status == "step_limit"


def test_wall_time_limit_stops_before_the_next_call() -> None:
    now = [0.0]

    class SlowShell(FakeShell):
        def execute(self, command: str) -> Obs:
            now[0] += 10.0  # every command takes ten seconds of the clock
            return super().execute(command)

    replay = model([bash("make")])
    traj = Agent(replay, AgentConfig(step_limit=0, cost_limit=0, wall_limit=25), clock=lambda: now[0]).run(
        TASK, SlowShell())
    assert traj.exit_status == "wall_limit" and traj.steps == 3 and replay.total.calls == 3
