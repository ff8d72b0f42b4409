"""The bash-only agent: one shell command per turn, submission by a sentinel line.

As in mini-swe-agent: the conversation is a plain list of messages, every answer must hold exactly
one ```bash block, each command runs in a fresh shell, and the run ends when a command's output
starts with the sentinel. Limits are checked before every model call, so none is crossed by
more than what one call may cost; the diff is taken from git, whatever ended the run.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from issuebench.agent.templates import load, render
from issuebench.llm import SUBMIT_SENTINEL, Model, ModelAPIError, Usage
from issuebench.models import StrStatus, Task
from issuebench.sandbox import RunStatus

_BASH_BLOCK = re.compile(r"```bash[ \t]*\n(.*?)\n?```", re.DOTALL)



class ExitStatus(StrStatus):
    """How a run ended (Trajectory.exit_status)."""

    SUBMITTED = "submitted"
    STEP_LIMIT = "step_limit"
    COST_LIMIT = "cost_limit"
    WALL_LIMIT = "wall_limit"
    API_ERROR = "api_error"
    ENV_FAILED = "env_failed"
    NOT_STARTED = "not_started"
    ERROR = "error"
    WORKER_LOST = "worker_lost"  # the instance's worker (--executor ray) died on every attempt


# The agent's own outcomes (its patch is a prediction), then faults of the machinery, never a
# verdict on the task: rerunning retries them.
AGENT_STATUSES = (ExitStatus.SUBMITTED, ExitStatus.STEP_LIMIT, ExitStatus.COST_LIMIT, ExitStatus.WALL_LIMIT)
INFRA_STATUSES = (ExitStatus.API_ERROR, ExitStatus.ENV_FAILED, ExitStatus.NOT_STARTED, ExitStatus.ERROR,
                  ExitStatus.WORKER_LOST)


class CommandShell(Protocol):
    """Where the agent's commands run (a sandboxed workspace); not executors.Executor, which fans out work."""

    def execute(self, command: str) -> Any: ...


@dataclass
class AgentConfig:
    step_limit: int = 50                 # model calls per instance (0: no limit)
    cost_limit: float = 3.0              # dollars per instance (0: no limit)
    wall_limit: float | None = None      # seconds per instance
    command_timeout: float = 60.0        # seconds per command (the sandbox kills past it)
    output_chars: int = 10_000           # output kept per observation (head + tail)


@dataclass
class Trajectory:
    instance_id: str
    model: str
    messages: list[dict[str, str]] = field(default_factory=list)
    exit_status: ExitStatus = ExitStatus.ERROR
    reason: str = ""
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    patch: str = ""
    duration: float = 0.0
    limits: dict[str, Any] = field(default_factory=dict)
    worker: str = ""  # host and pid that ran it, when not this process (--executor ray)

    def as_dict(self) -> dict[str, Any]:
        return {"instance_id": self.instance_id, "model": self.model, "exit_status": self.exit_status,
                "reason": self.reason, "steps": self.steps, "cost": round(self.usage.cost, 8),
                "usage": self.usage.as_dict(), "duration": round(self.duration, 3), "limits": self.limits,
                "patch": self.patch, "messages": self.messages, **({"worker": self.worker} if self.worker else {})}


class CostLedger:
    """Money spent across instances, shared by the workers of a run."""

    def __init__(self, limit: float = 0.0, spent: float = 0.0) -> None:
        self.limit = limit
        self.spent = spent
        self._lock = threading.Lock()

    def add(self, cost: float) -> None:
        with self._lock:
            self.spent += cost

    def exhausted(self) -> bool:
        with self._lock:
            return self.limit > 0 and self.spent >= self.limit


def first_output_line(output: str) -> str:
    lines = output.lstrip().splitlines()
    return lines[0].strip() if lines else ""


def truncate(output: str, keep: int) -> tuple[str, str]:
    """(shown output, note): the head and tail of a long output, with a note saying what was cut."""
    if len(output) <= keep:
        return output, ""
    half = keep // 2
    elided = len(output) - 2 * half
    shown = f"{output[:half]}\n[... {elided} characters elided ...]\n{output[-half:]}"
    return shown, render(load("truncated"), total=len(output), keep=half)


class Agent:
    def __init__(self, model: Model, config: AgentConfig, ledger: CostLedger | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.model = model
        self.config = config
        self.ledger = ledger or CostLedger()
        self.clock = clock  # injectable, so the wall-time limit is tested without waiting

    def run(self, task: Task, env: CommandShell) -> Trajectory:
        cfg = self.config
        traj = Trajectory(task.instance_id, self.model.name, limits={
            "step_limit": cfg.step_limit, "cost_limit": cfg.cost_limit, "wall_limit": cfg.wall_limit,
            "command_timeout": cfg.command_timeout})
        traj.messages = [
            {"role": "system", "content": render(load("system"), sentinel=SUBMIT_SENTINEL,
                                                 timeout=int(cfg.command_timeout))},
            {"role": "user", "content": render(load("instance"), repo=task.repo,
                                               problem_statement=task.problem_statement)},
        ]
        started = self.clock()
        try:
            self._loop(traj, env, started)
        finally:
            traj.duration = self.clock() - started
        return traj

    def _stop_reason(self, traj: Trajectory, started: float, costliest: float) -> tuple[ExitStatus, str] | None:
        cfg = self.config
        if cfg.step_limit and traj.steps >= cfg.step_limit:
            return ExitStatus.STEP_LIMIT, f"reached the step limit ({cfg.step_limit} model calls)"
        if cfg.wall_limit and self.clock() - started >= cfg.wall_limit:
            return ExitStatus.WALL_LIMIT, f"reached the wall-time limit ({cfg.wall_limit:g} s)"
        # The next call is assumed to cost as much as the costliest so far: a call that would
        # cross the limit is never made, so the limit holds to the cent.
        if cfg.cost_limit and traj.usage.cost + costliest > cfg.cost_limit:
            return ExitStatus.COST_LIMIT, (f"the next call would pass the cost limit (${cfg.cost_limit:g}; "
                                  f"spent ${traj.usage.cost:.4f})")
        return None

    def _loop(self, traj: Trajectory, env: CommandShell, started: float) -> None:
        cfg = self.config
        costliest = 0.0
        while True:
            stop = self._stop_reason(traj, started, costliest)
            if stop:
                traj.exit_status, traj.reason = stop
                return
            try:
                reply = self.model.query(traj.messages)
            except ModelAPIError as exc:
                traj.exit_status, traj.reason = ExitStatus.API_ERROR, f"{exc.message} ({exc.kind})"
                return
            traj.steps += 1
            traj.usage.add(reply.usage)
            self.ledger.add(reply.cost)
            costliest = max(costliest, reply.cost)
            traj.messages.append({"role": "assistant", "content": reply.content})
            if cfg.cost_limit and traj.usage.cost > cfg.cost_limit:
                # One call cost more than any before it and crossed the limit: stop, and say so.
                traj.exit_status = ExitStatus.COST_LIMIT
                traj.reason = f"the last call passed the cost limit (${cfg.cost_limit:g}; spent ${traj.usage.cost:.4f})"
                return
            commands = _BASH_BLOCK.findall(reply.content)
            if len(commands) != 1:
                traj.messages.append({"role": "user", "content": render(
                    load("format_error"), count=len(commands), sentinel=SUBMIT_SENTINEL)})
                continue
            obs = env.execute(commands[0])
            if obs.status == RunStatus.OK and first_output_line(obs.output) == SUBMIT_SENTINEL:
                traj.exit_status, traj.reason = ExitStatus.SUBMITTED, "the agent submitted"
                return
            traj.messages.append({"role": "user", "content": self._observation(obs)})

    def _observation(self, obs: Any) -> str:
        shown, note = truncate(obs.output, self.config.output_chars)
        if obs.status != RunStatus.OK:
            note = render(load("limit"), reason=obs.reason or obs.status) + ("\n" + note if note else "")
        return render(load("observation"), returncode=obs.returncode, output=shown,
                      note=note + "\n" if note else "")
