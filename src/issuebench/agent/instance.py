"""One instance through the agent: its environment, the loop, its diff; never an exception."""

from __future__ import annotations

from issuebench.agent.environment import TaskEnvironment
from issuebench.agent.loop import AGENT_STATUSES, Agent, AgentConfig, CostLedger, ExitStatus, Trajectory
from issuebench.errors import IssuebenchError
from issuebench.harness import EvalContext
from issuebench.llm import Model
from issuebench.models import Task


def run_one(task: Task, model: Model, config: AgentConfig, ctx: EvalContext, ledger: CostLedger) -> Trajectory:
    """One instance. Faults of the machinery end in an infrastructure status, never an exception."""
    if ledger.exhausted():
        return Trajectory(task.instance_id, model.name, exit_status=ExitStatus.NOT_STARTED,
                          reason=f"the total cost limit (${ledger.limit:g}) was reached before it started")
    env = TaskEnvironment(task, ctx)
    try:
        try:
            env.start()
        except IssuebenchError as exc:
            reason = f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message
            return Trajectory(task.instance_id, model.name, exit_status=ExitStatus.ENV_FAILED, reason=reason)
        traj = Agent(model, config, ledger).run(task, env)
        if traj.exit_status in AGENT_STATUSES:
            traj.patch = env.diff()
        return traj
    except Exception as exc:  # one bad instance never stops the run
        return Trajectory(task.instance_id, model.name, exit_status=ExitStatus.ERROR,
                          reason=f"harness error: {type(exc).__name__}: {exc}")
    finally:
        env.close()
