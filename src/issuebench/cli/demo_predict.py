"""The demo's last step: predict → grade → report, offline, with the shipped test models.

A loopback chat-completions server answers from a replay script (each task solved with its gold
patch), and injects a rate limit and a server error on the way; the real client retries them.
`agent` and `infer` (BM25) make predictions, `eval` grades them, `report` sums them up.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from issuebench.cli.progress import ItemProgress, item_progress
from issuebench.cli.tables import print_table
from issuebench.harness import EvalContext
from issuebench.models import InstanceReport, InstanceStatus, Task

if TYPE_CHECKING:
    from issuebench.analysis import SystemSummary

PER_PROJECT = 1  # tasks per demo project: enough to show every stage, quick enough for `make demo`


def pick_tasks(tasks: list[Task]) -> list[Task]:
    seen: dict[str, int] = {}
    out = []
    for task in tasks:
        if seen.get(task.repo, 0) < PER_PROJECT:
            seen[task.repo] = seen.get(task.repo, 0) + 1
            out.append(task)
    return out


def predict_grade_report(console: Console, tasks: list[Task], ctx: EvalContext, output: Path,
                         workers: int | None = None) -> bool:
    """Run the step and print it; True when every prediction was graded resolved."""
    from issuebench.agent import AgentConfig, run_agent
    from issuebench.analysis import report_from_paths
    from issuebench.datasets import load_predictions
    from issuebench.harness import run_evaluation
    from issuebench.infer import InferConfig, run_infer
    from issuebench.llm import LoopbackServer, OpenAIModel, ReplayModel, RetryPolicy, solve_script

    chosen = pick_tasks(tasks)
    retry = RetryPolicy(retries=4, backoff=0.05)
    rows, ok = [], True
    for mode in ("agent", "infer"):
        name = f"replay-{mode}"
        folder = output / "predict" / mode
        started = time.monotonic()
        server = LoopbackServer(ReplayModel(solve_script(chosen, mode=mode), name=name), faults=["429", "500"])
        with server, item_progress(console, f"{mode}: asking the replay model over loopback HTTP",
                                   len(chosen)) as progress:
            model = OpenAIModel(name, base_url=server.url, api_key="loopback", retry=retry)
            said = partial(_predicted, progress, mode)
            if mode == "agent":
                run_agent(chosen, model, ctx, folder, config=AgentConfig(step_limit=10, cost_limit=0.5,
                                                                           command_timeout=60),
                          workers=workers or 2, resume=False, on_result=said)
            else:
                run_infer(chosen, model, folder, InferConfig(repos_dir=ctx.repos_dir), workers=workers or 2,
                          resume=False, on_result=said)
        preds_path = folder / "preds.jsonl"
        preds = load_predictions(preds_path, chosen).predictions if preds_path.is_file() else []
        with item_progress(console, f"grading the {mode}'s patches", len(preds)) as progress:
            graded = run_evaluation(chosen, preds, ctx, workers=workers,
                                    on_result=partial(_graded, progress, mode))
        ok = ok and len(preds) == len(chosen) and all(r.status is InstanceStatus.RESOLVED for r in graded.reports)
        summaries = [m.summary_path for m in graded.models]
        # Cost and steps as `report --predictions` reads them, beside the graded verdicts.
        system = report_from_paths(summaries, prediction_files=[preds_path]).systems[0] if summaries else None
        rows.append((mode, system, server.fault_log, time.monotonic() - started, folder))
    print_table(console, _table(rows, len(chosen)))
    agent_dir = output / "predict" / "agent"
    console.print(f"Predictions: {output / 'predict'}/{{agent,infer}}/preds.jsonl — an agent's steps: "
                  f"[bold]issuebench agent show {chosen[0].instance_id} -o {agent_dir}[/]", highlight=False)
    agent = next(system for mode, system, *_ in rows if mode == "agent")
    if agent is not None:
        console.print(f"Steps and cost per task: [bold]issuebench report {agent.source} -p {agent_dir / 'preds.jsonl'} "
                      "-f md[/]", highlight=False)
    return ok


def _predicted(progress: ItemProgress, mode: str, record: dict) -> None:
    progress.done(f"{mode} {record['instance_id']}: {record.get('exit_status') or record['status']}")


def _graded(progress: ItemProgress, mode: str, report: InstanceReport) -> None:
    progress.done(f"{mode} graded {report.instance_id}: {report.status.value}")


def _steps(system: SystemSummary | None) -> str:
    """All model calls, per task, and how many runs the step limit stopped; blank when none stated."""
    s = system.steps if system else None
    if s is None:
        return ""
    return f"{s.all.total}, {s.all.mean:.1f}/task" + (f", {len(s.step_limit)} at the limit" if s.step_limit else "")


def _table(rows: list, n: int) -> Table:
    table = Table(title=f"3. Predict → grade → report ({n} tasks, a replay model behind a loopback server)",
                  header_style="bold", caption="agent: the bash-only loop, each command in the sandbox; infer: BM25 "
                  "files + one call. The API faults were injected on purpose and retried; none counts against "
                  "a task. Cost at the test model's rate in the price table: nothing is billed.")
    for col in ("how", "resolved", "cost $", "steps", "faults retried", "s"):
        table.add_column(col, justify="left" if col in ("how", "faults retried") else "right", no_wrap=True)
    for mode, system, faults, seconds, _folder in rows:
        resolved = f"{system.resolved}/{system.total}" if system else "0"
        cost = f"{system.total_cost:.4f}" if system and system.total_cost is not None else "-"
        table.add_row(mode, resolved, cost, _steps(system), ", ".join(faults) or "-", f"{seconds:.1f}")
    return table
