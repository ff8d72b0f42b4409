"""`issuebench eval`: grade predictions against a SWE-bench-format dataset."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from issuebench.cli.common import console, err_console, friendly_errors
from issuebench.cli.eval_view import print_result, status_text
from issuebench.datasets import load_predictions, load_tasks
from issuebench.errors import IssuebenchError


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


@friendly_errors
def eval_command(
    dataset: str = typer.Option(..., "--dataset", "-d", help="Tasks: .json/.jsonl/.parquet, a folder, 'demo', or a hub name."),
    predictions: str = typer.Option(..., "--predictions", "-p", help="Predictions .jsonl/.json, or 'gold'."),
    instance_ids: list[str] = typer.Option(None, "--instance-ids", help="Only these instances (one or more ids)."),
    run_id: str = typer.Option(None, "--run-id", help="Name of this run (default: a timestamp)."),
    workers: int = typer.Option(None, "--workers", "-w", help="Instances in parallel (default: number of cores)."),
    timeout: float = typer.Option(1800.0, "--timeout", help="Seconds the tests of one instance may run."),
    repos: Path = typer.Option(None, "--repos", help="Folder of local clones: DIR/owner__name or DIR/owner/name."),
    output: Path = typer.Option(Path("."), "--output", "-o", help="Where logs/ and the summary go."),
    recipes: Path = typer.Option(None, "--recipes", help="A folder of your own environment recipes (TOML)."),
    split: str = typer.Option("test", "--split", help="Split to load from a folder or hub dataset."),
    no_sandbox: bool = typer.Option(False, "--no-sandbox", help="Run tests without bubblewrap (unsafe)."),
    strict: bool = typer.Option(False, "--strict", help="Also count XFAIL/SKIPPED as FAIL_TO_PASS failures."),
    allow_duplicates: bool = typer.Option(False, "--allow-duplicates", help="Keep the last of duplicate predictions."),
    python_fallback: str = typer.Option("error", "--python-fallback", help="'error' or 'nearest' installed Python."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore cached results and rerun everything."),
    offline: bool = typer.Option(False, "--offline", help="Never clone repositories from the network."),
    backend: str = typer.Option("local", "--backend", help="'local' (uv + bubblewrap) or 'docker' (reference images)."),
) -> None:
    """Grade predictions (patches) on a dataset; exits 0 when the run completed, whatever the verdicts."""
    from issuebench.harness import build_context, run_evaluation

    if backend not in ("local", "docker"):
        raise IssuebenchError(f"unknown backend '{backend}'", hint="use --backend local or --backend docker")
    tasks = load_tasks(dataset, split=split)
    if dataset == "demo":
        from issuebench.demo import demo_repos_dir

        repos = repos or demo_repos_dir()
        python_fallback = "nearest"  # the demo's projects run on any Python 3.8+
    if instance_ids:
        wanted = set(instance_ids)
        missing = sorted(wanted - {t.instance_id for t in tasks})
        if missing:
            err_console.print(f"[yellow]warning:[/] not in the dataset, skipped: {', '.join(missing)}")
        tasks = [t for t in tasks if t.instance_id in wanted]
    preds = load_predictions(predictions, tasks, allow_duplicates=allow_duplicates)
    if preds.unknown_ids:
        err_console.print(f"[yellow]warning:[/] {len(preds.unknown_ids)} prediction(s) name instances not in the "
                          f"dataset and were skipped: {', '.join(preds.unknown_ids[:10])}")
    if preds.duplicates:
        err_console.print(f"[yellow]warning:[/] duplicate predictions, the last kept: {', '.join(preds.duplicates)}")
    run_id = run_id or time.strftime("run-%Y%m%d-%H%M%S")
    ctx = build_context(output_dir=output, run_id=run_id, timeout=timeout, repos_dir=repos, recipes_dir=recipes,
                        no_sandbox=no_sandbox, strict=strict, allow_clone=not offline,
                        use_cache=not no_cache, python_fallback=python_fallback, backend=backend)
    if getattr(ctx.sandbox, "name", "") == "none" and backend == "local":
        err_console.print("[yellow]warning:[/] running WITHOUT a sandbox (--no-sandbox): patches run unconfined")
    progress = Progress(TextColumn("[bold]eval"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.description}"), console=console, transient=True)
    with progress:
        bar = progress.add_task("", total=len(preds.predictions))

        def on_result(report) -> None:
            progress.update(bar, advance=1, description=f"{report.instance_id}: {status_text(report.status)}")

        result = run_evaluation(tasks, preds.predictions, ctx, workers=workers, on_result=on_result)
    print_result(console, result)
