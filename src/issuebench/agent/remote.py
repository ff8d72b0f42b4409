"""agent on a remote executor: each instance's whole loop (workspace, environment, model calls,
commands, diff) runs on one worker; its Trajectory comes back and the driver writes it.

The run's total cost limit is the driver's: the ledger lives here, fed by each finished
instance's cost, and no instance is submitted once it is reached (the rest end `not_started`, as
locally). Instances already running finish; their own per-instance limits hold in the worker's
loop. A worker lost beyond the executor's retries gives the infrastructure status `worker_lost`
(no prediction; a rerun retries it). The cost of an attempt lost with its worker is not counted.
"""

from __future__ import annotations

import os
import socket

from issuebench.agent.instance import run_one
from issuebench.agent.loop import AgentConfig, CostLedger, ExitStatus, Trajectory
from issuebench.executors import Failure
from issuebench.harness import EvalOptions, worker_context
from issuebench.llm import Model
from issuebench.models import Task

# What a worker needs from the driver's environment to reach the model (names only, never values).
# The last two are read by the `openai` package itself.
MODEL_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ISSUEBENCH_MODEL_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")


def agent_record(task: Task, *, model: Model, config: AgentConfig, options: EvalOptions) -> Trajectory:
    """Runs on a worker: one instance through the agent, in the worker's rebuilt run context."""

    # A ledger with no limit: the run's total is enforced by the driver, between instances.
    traj = run_one(task, model, config, worker_context(options), CostLedger())
    traj.worker = f"{socket.gethostname()} pid {os.getpid()}"
    return traj


def lost(task: Task, model: Model, failure: Failure) -> Trajectory:
    status = ExitStatus.WORKER_LOST if failure.kind == "worker_lost" else ExitStatus.ERROR
    return Trajectory(task.instance_id, model.name, exit_status=status, reason=f"{failure.kind}: {failure.reason}")
