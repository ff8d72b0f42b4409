"""`issuebench regrade`: grade saved logs again, ours or the reference harness's, running nothing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer

from issuebench.cli.common import console, err_console, friendly_errors
from issuebench.cli.next_step import command, say_next
from issuebench.cli.options import instance_ids_option, option
from issuebench.cli.tables import print_table


def register(app: typer.Typer) -> None:
    app.command("regrade")(regrade_command)


@friendly_errors
def regrade_command(
    logs: Path = typer.Option(..., "--logs", "-l", help="A run's output folder, logs/run_evaluation/..., "
                              "or any folder of <instance_id>/test_output.txt (found recursively)."),
    dataset: str = option("--dataset", ..., after="It needs instance_id, FAIL_TO_PASS, PASS_TO_PASS; repo or "
                          "log_parser picks the parser (default: the repository named by the id)."),
    instance_ids: list[str] = instance_ids_option(after="Logs of other instances are left out."),
    output: Path = option("--output", None, after="Write report.json per instance (same layout as --logs) and "
                          "the run summary here. Without it, only print the results."),
    strict: bool = option("--strict"),
    rule: str = typer.Option("auto", "--rule", help="Grading rule: auto (each log's own harness), current, "
                             "swebench-4 or swebench-2 (see docs/conformance.md)."),
    parser: str = typer.Option(None, "--parser", help="Use this log parser for every log (default: the row's "
                               "log_parser, the recipe's, or the reference's for the repository)."),
    recipes: Path = option("--recipes", after="The folder the eval run used, if any."),
    split: str = option("--split"),
    run_id: str = option("--run-id", None, after="Run id for the summary (default: from the log path)."),
    model: str = option("--model-name", None, keep=("--model",)),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print every instance, not only the totals."),
) -> None:
    """Grade saved test logs without running anything; the verdicts match the harness that wrote them."""
    from issuebench.cli.eval_view import results_table
    from issuebench.datasets import load_tasks
    from issuebench.models import InstanceStatus
    from issuebench.regrade import regrade

    tasks = load_tasks(dataset, split=split, needs_checkout=False)  # grading reads no repository
    result = regrade(logs, tasks, output, strict=strict, rule=rule, run_id=run_id, model=model,
                     recipes_dir=recipes, parser_name=parser, only=instance_ids)
    if instance_ids:
        found = {r.instance_id for r in result.reports} | set(result.unfinished)
        absent = [i for i in instance_ids if i not in found]
        if absent:
            err_console.print(f"[yellow]warning:[/] --instance-ids without a log: {', '.join(absent)}", highlight=False)
    reports = result.reports
    unknown = [r.instance_id for r in reports if r.reason.startswith("instance not in the dataset")]
    if unknown:
        err_console.print(f"[yellow]warning:[/] {len(unknown)} log(s) name instances not in the dataset: "
                          f"{', '.join(unknown[:10])}")
    if result.unfinished:
        ids = result.unfinished
        err_console.print(f"note: {len(ids)} instance folder(s) without result.json (instances an interrupted run "
                          f"never finished) are not results and were left out: {', '.join(ids[:10])}"
                          + (", ..." if len(ids) > 10 else ""), highlight=False)
    if verbose:
        print_table(console, results_table(reports, title="regrade"))
    counts = Counter(r.status.value for r in reports)
    resolved = counts.get(InstanceStatus.RESOLVED.value, 0)
    console.print(f"regraded {len(reports)} log(s): [bold green]{resolved} resolved[/] "
                  + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())
                              if status != InstanceStatus.RESOLVED.value))
    for path in result.summaries:
        console.print(f"summary: {path}", highlight=False, soft_wrap=True)
    if result.summaries:
        say_next(console, command("report", *result.summaries))
