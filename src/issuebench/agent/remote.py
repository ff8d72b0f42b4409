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
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from issuebench.agent.loop import AgentConfig, CostLedger, Trajectory
from issuebench.executors.base import Executor, Failure
from issuebench.executors.gate import Gate
from issuebench.harness.instance import EvalContext
from issuebench.harness.options import EvalOptions
from issuebench.llm import Model
from issuebench.models import Task

# What a worker needs from the driver's environment to reach the model (names only, never values).
# The last two are read by the `openai` package itself.
MODEL_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ISSUEBENCH_MODEL_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")


def agent_record(task: Task, *, model: Model, config: AgentConfig, options: EvalOptions) -> Trajectory:
    """Runs on a worker: one instance through the agent, in the worker's rebuilt run context."""
    from issuebench.agent.run import run_one
    from issuebench.harness.remote import worker_context

    # A ledger with no limit: the run's total is enforced by the driver, between instances.
    traj = run_one(task, model, config, worker_context(options), CostLedger())
    traj.worker = f"{socket.gethostname()} pid {os.getpid()}"
    return traj


def lost(task: Task, model: Model, failure: Failure) -> Trajectory:
    status = "worker_lost" if failure.kind == "worker_lost" else "error"
    return Trajectory(task.instance_id, model.name, exit_status=status, reason=f"{failure.kind}: {failure.reason}")


def run_remote(executor: Executor, todo: Sequence[Task], model: Model, config: AgentConfig, ctx: EvalContext,
               ledger: CostLedger, finish: Callable[[Trajectory], Any]) -> None:
    """Driver side: ship instances while money is left, hand each Trajectory to `finish` as it arrives.

    `model` must pickle (OpenAIModel and ReplayModel do; the API key is read again on the worker,
    from the variables the executor forwards)."""
    fn = partial(agent_record, model=model, config=config, options=ctx.options)
    gate = Gate(todo, ledger.exhausted)  # nothing is shipped once the total is reached
    for index, result in executor.map_unordered(fn, gate):
        task = todo[index]
        traj = lost(task, model, result) if isinstance(result, Failure) else result
        ledger.add(traj.usage.cost)
        finish(traj)
    from issuebench.agent.run import run_one

    for task in todo[gate.drawn:]:  # never shipped: the total was reached first
        finish(run_one(task, model, config, ctx, ledger))  # the spent ledger: `not_started`, as locally
