"""Many instances through the agent: workers, a total cost limit, resume, one record per instance."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench.agent.environment import TaskEnvironment
from issuebench.agent.loop import AGENT_STATUSES, Agent, AgentConfig, CostLedger, Trajectory
from issuebench.agent.store import RunFolder
from issuebench.errors import IssuebenchError
from issuebench.executors.base import Executor
from issuebench.harness.instance import EvalContext
from issuebench.llm import Model
from issuebench.models import Task


@dataclass
class AgentRunResult:
    folder: RunFolder
    trajectories: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)      # done by an earlier run (resume)
    spent: float = 0.0


def prediction_record(traj: Trajectory) -> dict[str, Any]:
    """A predictions row `eval` takes as it is, carrying cost, usage and steps for `report`."""
    return {"instance_id": traj.instance_id, "model_name_or_path": traj.model, "model_patch": traj.patch,
            "cost": round(traj.usage.cost, 8), "usage": {**traj.usage.as_dict(), "steps": traj.steps},
            "steps": traj.steps, "exit_status": traj.exit_status}


def run_one(task: Task, model: Model, config: AgentConfig, ctx: EvalContext, ledger: CostLedger) -> Trajectory:
    """One instance. Faults of the machinery end in an infrastructure status, never an exception."""
    if ledger.exhausted():
        return Trajectory(task.instance_id, model.name, exit_status="not_started",
                          reason=f"the total cost limit (${ledger.limit:g}) was reached before it started")
    env = TaskEnvironment(task, ctx)
    try:
        try:
            env.start()
        except IssuebenchError as exc:
            reason = f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message
            return Trajectory(task.instance_id, model.name, exit_status="env_failed", reason=reason)
        traj = Agent(model, config, ledger).run(task, env)
        if traj.exit_status in AGENT_STATUSES:
            traj.patch = env.diff()
        return traj
    except Exception as exc:  # one bad instance never stops the run
        return Trajectory(task.instance_id, model.name, exit_status="error",
                          reason=f"harness error: {type(exc).__name__}: {exc}")
    finally:
        env.close()


def run_agent(tasks: Iterable[Task], model: Model, ctx: EvalContext, output: Path, *,
              config: AgentConfig | None = None, total_cost_limit: float = 0.0, workers: int = 1,
              resume: bool = True, on_result: Callable[[dict[str, Any]], None] | None = None,
              executor: Executor | None = None) -> AgentRunResult:
    """`executor` (issuebench.executors.get_executor): None or local runs the instances here in
    `workers` threads; ray runs each instance's loop on a worker and writes its files here."""
    config = config or AgentConfig()
    folder = RunFolder(output)
    result = AgentRunResult(folder)
    todo: list[Task] = []
    done = folder.predicted_ids() if resume else set()
    for task in tasks:
        old = folder.read_trajectory(task.instance_id) if resume else None
        if task.instance_id in done and old is not None and old.get("exit_status") in AGENT_STATUSES:
            result.skipped.append(task.instance_id)
        else:
            todo.append(task)
    rerun = [t.instance_id for t in todo]
    folder.make_room(rerun)  # with or without resume, the folder ends with one prediction per instance
    # What earlier runs of this folder spent counts against the total, once per instance: the old
    # trajectory of an instance run again is replaced by its new one.
    ledger = CostLedger(total_cost_limit, folder.total_cost(excluding=rerun))

    def finish(traj: Trajectory) -> None:
        record = traj.as_dict()
        folder.write_trajectory(record)
        if traj.exit_status in AGENT_STATUSES:
            folder.append_prediction(prediction_record(traj))
        result.trajectories.append(record)
        if on_result:
            on_result(record)

    if executor is not None and executor.name != "local":  # each instance on a worker; the driver writes
        from issuebench.agent.remote import run_remote

        run_remote(executor, todo, model, config, ctx, ledger, finish)
    else:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            futures = [pool.submit(run_one, task, model, config, ctx, ledger) for task in todo]
            for future in as_completed(futures):
                finish(future.result())
    order = {t.instance_id: i for i, t in enumerate(todo)}
    result.trajectories.sort(key=lambda r: order[r["instance_id"]])
    result.spent = ledger.spent
    return result
