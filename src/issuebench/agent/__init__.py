"""The bash-only agent: one command per turn in the task's own workspace and environment,
inside the sandbox, with step, wall-time and cost limits. `run_agent` writes DIR/preds.jsonl
(what `eval` takes) and DIR/trajectories/<id>.json (the messages, readable with `agent show`)."""

from __future__ import annotations

from issuebench.agent.environment import TaskEnvironment
from issuebench.agent.loop import (
    AGENT_STATUSES,
    INFRA_STATUSES,
    Agent,
    AgentConfig,
    CostLedger,
    ExitStatus,
    Trajectory,
)
from issuebench.agent.remote import MODEL_ENV
from issuebench.agent.run import AgentRunResult, run_agent, run_one
from issuebench.agent.store import RunFolder

__all__ = [
    "AGENT_STATUSES",
    "INFRA_STATUSES",
    "MODEL_ENV",
    "Agent",
    "AgentConfig",
    "AgentRunResult",
    "CostLedger",
    "ExitStatus",
    "RunFolder",
    "TaskEnvironment",
    "Trajectory",
    "run_agent",
    "run_one",
]
