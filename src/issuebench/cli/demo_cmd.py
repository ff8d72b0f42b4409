"""`issuebench demo`: the main job on the embedded demo dataset, explained for a newcomer."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.panel import Panel
from rich.table import Table

from issuebench.cli.common import console, friendly_errors
from issuebench.cli.eval_view import STATUS_MEANING, status_text, summary_line
from issuebench.cli.next_step import how_to_run
from issuebench.cli.options import option, workers_option
from issuebench.cli.progress import item_progress
from issuebench.cli.tables import print_table
from issuebench.models import InstanceReport, InstanceStatus


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)


@friendly_errors
def demo_command(
    output: Path = option("--output", Path("demo-run"), after="Where the demo's logs go."),
    workers: int = workers_option("Instances"),
    no_sandbox: bool = option("--no-sandbox"),
) -> None:
    """Grade the gold patches and a mix of good and bad patches on the embedded demo dataset."""
    from issuebench.datasets import gold_predictions
    from issuebench.demo import (
        demo_predictions,
        demo_repos_dir,
        demo_tasks,
        expected_mixed,
        expected_mixed_details,
    )
    from issuebench.harness import EvalOptions, build_context, run_evaluation

    tasks = demo_tasks()
    console.print(Panel(
        f"The demo dataset has {len(tasks)} tasks from three small Python projects that ship with issuebench. "
        "Each task is an issue plus a repository at a commit. A patch [bold]resolves[/] a task when the tests "
        "the fix must make pass (FAIL_TO_PASS) pass and the tests that passed before (PASS_TO_PASS) still "
        "pass. Every patch runs in a sandbox with no network.", title="issuebench demo"))
    # The demo's projects run on any Python 3.8+: use the nearest installed one rather than stop.
    ctx = build_context(EvalOptions(output_dir=output, run_id="demo", repos_dir=demo_repos_dir(),
                                    no_sandbox=no_sandbox, timeout=300, python_fallback="nearest"))
    with item_progress(console, "grading the gold patches (the real fixes)", len(tasks)) as progress:
        gold = run_evaluation(tasks, gold_predictions(tasks), ctx, workers=workers,
                              on_result=lambda r: progress.done(f"gold {r.instance_id}: {r.status.value}"))
    console.print(f"[bold]1. Gold patches[/] (each task's own fix): {summary_line(gold.reports)}")
    with item_progress(console, "grading a mix of correct, wrong, partial, empty and broken patches",
                       len(tasks)) as progress:
        mixed = run_evaluation(tasks, demo_predictions("mixed"), ctx, workers=workers,
                               on_result=lambda r: progress.done(f"mixed {r.instance_id}: {r.status.value}"))
    expected = expected_mixed()
    print_table(console, _mixed_table(mixed.reports, expected_mixed_details()))
    console.print(f"[bold]demo-mixed[/]: {summary_line(mixed.reports)}")
    seen = {r.status for r in mixed.reports}
    console.print("\n[bold]What the statuses mean[/]")
    for status in InstanceStatus:
        if status in seen:
            console.print(f"  [bold]{status.value}[/]: {STATUS_MEANING[status]}")
    agree = sum(expected.get(r.instance_id) == r.status.value for r in mixed.reports)
    console.print(f"\n{agree}/{len(mixed.reports)} verdicts match what each patch was written to produce.")
    from issuebench.cli.demo_predict import predict_grade_report

    predicted_ok = predict_grade_report(console, tasks, ctx, output, workers)
    console.print(f"Logs and reports: {output}/logs/run_evaluation/demo/ — summaries: {output}/*.demo.json")
    console.print(f"Next: [bold]{how_to_run()} eval --dataset demo --predictions gold[/], or your own dataset.",
                  highlight=False)
    if how_to_run() != "issuebench":
        console.print(f"(or [bold]source {Path(how_to_run()).parent / 'activate'}[/] first, to type just issuebench)",
                      highlight=False)
    if not predicted_ok or agree != len(mixed.reports) or any(r.status is not InstanceStatus.RESOLVED for r in gold.reports):
        raise typer.Exit(1)


def _mixed_table(reports: list[InstanceReport], details: dict[str, dict]) -> Table:
    """One row per patch: what it was written to do, and what issuebench made of it."""
    table = Table(title="2. A mix of patches, each written to show one verdict", header_style="bold",
                  caption="F2P: FAIL_TO_PASS tests passing / all of them; P2P: PASS_TO_PASS tests still "
                          "passing / all of them; ✓: the verdict the patch was written to get")
    table.add_column("task", no_wrap=True)
    table.add_column("the patch", ratio=1)
    table.add_column("verdict", no_wrap=True)
    table.add_column("F2P", justify="right", no_wrap=True)
    table.add_column("P2P", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for r in reports:
        detail = details.get(r.instance_id, {})
        f2p = p2p = "-"
        if r.tests_status is not None:
            f, p = r.tests_status.FAIL_TO_PASS, r.tests_status.PASS_TO_PASS
            f2p, p2p = f"{len(f.success)}/{len(f.success) + len(f.failure)}", f"{len(p.success)}/{len(p.success) + len(p.failure)}"
        verdict = status_text(r.status)
        if r.outcome is not None and r.outcome.value.lower() != r.status.value:
            verdict += f"\n[dim]{r.outcome.value}[/]"
        ok = detail.get("status") == r.status.value
        table.add_row(r.instance_id.removeprefix("issuebench-demo__"), detail.get("why", ""), verdict, f2p, p2p,
                      "[green]✓[/]" if ok else f"[red]✗ expected {detail.get('status')}[/]")
    return table
