"""Many instances: pick what to run, run it in parallel, write the summary per model."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from issuebench.harness.artifacts import RunLayout
from issuebench.harness.instance import EvalContext, evaluate_instance
from issuebench.harness.summary import write_summary
from issuebench.models import InstanceReport, InstanceStatus, Prediction, Task


@dataclass
class ModelRun:
    model: str
    reports: list[InstanceReport]
    summary_path: Path


@dataclass
class EvaluationResult:
    run_id: str
    output_dir: Path
    models: list[ModelRun] = field(default_factory=list)

    @property
    def reports(self) -> list[InstanceReport]:
        return [r for m in self.models for r in m.reports]


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def build_context(*, output_dir: Path, run_id: str, timeout: float = 1800.0, repos_dir: Path | None = None,
                  recipes_dir: Path | None = None, no_sandbox: bool = False, strict: bool = False,
                  allow_clone: bool = True, use_cache: bool = True, python_fallback: str = "error",
                  memory_mb: int | None = None, backend: str = "local",
                  keep_workspaces: bool = False) -> EvalContext:
    """Everything a run shares. Raises MissingSystemPiece once, before any instance starts."""
    from issuebench.envs import EnvBuilder
    from issuebench.harness.workspace import sweep_stale_workspaces
    from issuebench.sandbox import Limits, get_sandbox

    # The docker backend runs tests in the reference's images; no local sandbox is needed then.
    sandbox = get_sandbox(no_sandbox=no_sandbox or backend == "docker")
    sweep_stale_workspaces()  # what a killed run left behind
    limits = Limits(timeout=timeout) if memory_mb is None else Limits(timeout=timeout, memory_mb=memory_mb)
    builder = EnvBuilder(sandbox=sandbox, python_fallback=python_fallback)
    return EvalContext(layout=RunLayout(Path(output_dir), run_id), sandbox=sandbox, env_builder=builder,
                       limits=limits, repos_dir=repos_dir, recipes_dir=recipes_dir, strict=strict,
                       allow_clone=allow_clone, use_cache=use_cache, backend=backend,
                       keep_workspace=keep_workspaces)


def _guarded(task: Task, prediction: Prediction, ctx: EvalContext) -> InstanceReport:
    """An instance that crashes the harness still gets a status and a reason; the run goes on."""
    try:
        return evaluate_instance(task, prediction, ctx)
    except Exception as exc:  # one bad instance never stops the run
        from issuebench.harness.artifacts import write_instance_result

        report = InstanceReport(instance_id=task.instance_id, model_name_or_path=prediction.model_name_or_path,
                                status=InstanceStatus.ERROR, repo=task.repo,
                                reason=f"harness error: {type(exc).__name__}: {exc}")
        try:
            write_instance_result(ctx.layout.instance_dir(prediction.model_name_or_path, task.instance_id), report)
        except OSError:
            pass
        return report


def run_evaluation(tasks: Iterable[Task], predictions: Iterable[Prediction], ctx: EvalContext, *,
                   workers: int | None = None,
                   on_result: Callable[[InstanceReport], None] | None = None) -> EvaluationResult:
    """Evaluate every prediction whose task is in `tasks`; write one summary per model."""
    tasks = list(tasks)
    by_id = {t.instance_id: t for t in tasks}
    predictions = [p for p in predictions if p.instance_id in by_id]
    models: dict[str, list[Prediction]] = {}
    for p in predictions:
        models.setdefault(p.model_name_or_path, []).append(p)

    reports: dict[str, list[InstanceReport]] = {m: [] for m in models}
    lock = threading.Lock()
    jobs = [(by_id[p.instance_id], p) for p in predictions]
    with ThreadPoolExecutor(max_workers=workers or default_workers()) as pool:
        futures = {pool.submit(_guarded, task, pred, ctx): pred for task, pred in jobs}
        for future in as_completed(futures):
            report = future.result()
            with lock:
                reports[futures[future].model_name_or_path].append(report)
            if on_result:
                on_result(report)

    result = EvaluationResult(run_id=ctx.layout.run_id, output_dir=ctx.layout.output_dir)
    for model, preds in models.items():
        path = write_summary(reports[model], run_id=ctx.layout.run_id, model=model,
                             output_dir=ctx.layout.output_dir, dataset_ids=list(by_id),
                             submitted_ids=[p.instance_id for p in preds])
        order = {p.instance_id: i for i, p in enumerate(preds)}
        result.models.append(ModelRun(model, sorted(reports[model], key=lambda r: order[r.instance_id]), path))
    return result
