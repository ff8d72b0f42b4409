"""Many instances through the agent: workers, a total cost limit, resume, one record per instance."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from issuebench.agent.instance import run_one
from issuebench.agent.loop import AGENT_STATUSES, AgentConfig, CostLedger, Trajectory
from issuebench.agent.remote import agent_record, lost
from issuebench.agent.store import RunFolder
from issuebench.executors import Executor, Failure, Gate, LocalExecutor, drive
from issuebench.harness import EvalContext
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

    executor = executor or LocalExecutor(max(1, workers))
    remote = executor.name != "local"
    if remote:  # each instance's loop on a worker; nothing is shipped once the total is reached
        work: Callable[[Task], Trajectory] = partial(agent_record, model=model, config=config, options=ctx.options)
        records: Sequence[Task] = Gate(todo, ledger.exhausted)
    else:  # here the threads share the ledger itself, and an instance checks it as it starts
        work, records = partial(run_one, model=model, config=config, ctx=ctx, ledger=ledger), todo

    def handle(index: int, outcome: Trajectory | Failure) -> None:
        traj = lost(todo[index], model, outcome) if isinstance(outcome, Failure) else outcome
        if remote:
            ledger.add(traj.usage.cost)
        finish(traj)

    drive(executor, work, records, handle)
    if isinstance(records, Gate):
        for task in todo[records.drawn:]:  # never shipped: the total was reached first
            finish(run_one(task, model, config, ctx, ledger))  # the spent ledger: `not_started`, as locally
    order = {t.instance_id: i for i, t in enumerate(todo)}
    result.trajectories.sort(key=lambda r: order[r["instance_id"]])
    result.spent = ledger.spent
    return result
