"""CLI verbs of the analysis part: report, compare, audit, contamination, perturb.

Each command parses its options, calls one function of issuebench.analysis, and prints or writes
the result. No computation lives here.
"""

from __future__ import annotations

from pathlib import Path

import typer

from issuebench.cli.common import console, friendly_errors
from issuebench.errors import InputError

REPORT_FORMATS = ("table", "json", "md", "csv", "html")


def _check_format(fmt: str, allowed: tuple[str, ...]) -> str:
    if fmt not in allowed:
        raise InputError(None, f"unknown format {fmt!r}", field="--format", hint=f"use one of {', '.join(allowed)}")
    return fmt


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        # Plain print: rich would re-wrap JSON and CSV lines.
        typer.echo(text, nl=not text.endswith("\n"))
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    console.print(f"wrote {output}", highlight=False)


def _load_dataset(dataset: str | None):
    if dataset is None:
        return None
    from issuebench.analysis.tasks import load_dataset

    return load_dataset(dataset)


@friendly_errors
def report_cmd(
    runs: list[Path] = typer.Argument(..., help="Run summaries, run folders or folders of instance folders."),
    fmt: str = typer.Option("table", "--format", "-f", help="table | json | md | csv | html"),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here instead of stdout."),
    dataset: str | None = typer.Option(None, "--dataset", "-d", help="Tasks: rates are over this set."),
    predictions: list[Path] = typer.Option([], "--predictions", "-p", help="Prediction files with cost/usage."),
) -> None:
    """Resolved rate with a 95% Wilson interval, statuses, outcome categories, per-repo rates, cost."""
    from issuebench.analysis.report import render, report_from_paths, to_rich_tables

    _check_format(fmt, REPORT_FORMATS)
    report = report_from_paths(runs, tasks=_load_dataset(dataset), prediction_files=predictions)
    if fmt == "table" and output is None:
        for table in to_rich_tables(report):
            console.print(table)
        for s in report.systems:
            for note in s.notes:
                console.print(f"[yellow]note[/] {s.name}: {note}", highlight=False)
        return
    _emit(render(report, "md" if fmt == "table" else fmt), output)


def _one_system(path: Path, label: str):
    from issuebench.analysis.runs import load_runs

    runs = load_runs([path])
    if len(runs) != 1:
        names = ", ".join(r.name for r in runs)
        raise InputError(path, f"holds {len(runs)} systems ({names}); {label} must be exactly one",
                         hint="point at one model folder or one run summary")
    return runs[0]


@friendly_errors
def compare_cmd(
    run_a: Path = typer.Argument(..., help="System A: a run summary or one system's run folder."),
    run_b: Path = typer.Argument(..., help="System B."),
    fmt: str = typer.Option("table", "--format", "-f", help="table | json | md"),
    output: Path | None = typer.Option(None, "--output", "-o"),
    n_boot: int = typer.Option(10_000, "--bootstrap", help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap (same seed, same interval)."),
) -> None:
    """Paired difference over shared tasks: bootstrap interval, exact McNemar, tasks needed."""
    from issuebench.analysis.compare import compare_runs, to_json, to_markdown, to_text

    _check_format(fmt, ("table", "json", "md"))
    a, b = _one_system(run_a, "A"), _one_system(run_b, "B")
    if a.name == b.name:
        a.name, b.name = f"A:{a.name}", f"B:{b.name}"
    result = compare_runs(a, b, n_boot=n_boot, seed=seed)
    render = {"table": to_text, "json": to_json, "md": to_markdown}[fmt]
    _emit(render(result), output)


@friendly_errors
def audit_cmd(
    dataset: str = typer.Argument(..., help="Tasks: .json, .jsonl, .parquet, a folder or a hub name."),
    fmt: str = typer.Option("table", "--format", "-f", help="table | json"),
    output: Path | None = typer.Option(None, "--output", "-o"),
    run: Path | None = typer.Option(None, "--run", help="A run: correlate each characteristic with success."),
    alternatives: Path | None = typer.Option(
        None, "--alternatives", help="Predictions holding known-valid alternative fixes: run them and list rejects."),
    output_dir: Path = typer.Option(Path("audit-output"), "--output-dir", help="Where --alternatives runs write."),
    repos_dir: Path | None = typer.Option(None, "--repos-dir", help="Local clones for --alternatives."),
    no_sandbox: bool = typer.Option(False, "--no-sandbox", help="Run --alternatives without bubblewrap."),
    timeout: float = typer.Option(1800.0, "--timeout", help="Seconds per instance for --alternatives."),
) -> None:
    """Lite rules rule by rule, Verified-style checks, characteristics (and their link to success)."""
    from issuebench.analysis.audit_report import audit_tasks, to_json, to_text

    _check_format(fmt, ("table", "json"))
    tasks = _load_dataset(dataset)
    system = _one_system(run, "--run") if run is not None else None
    rejected = None
    if alternatives is not None:
        from issuebench.analysis.audit import dynamic_check, harness_evaluator
        from issuebench.datasets import load_predictions

        preds = load_predictions(alternatives, tasks).predictions
        evaluate = harness_evaluator(output_dir=output_dir, repos_dir=repos_dir, no_sandbox=no_sandbox,
                                     timeout=timeout)
        rejected = dynamic_check(tasks, preds, evaluate)
    report = audit_tasks(tasks, run=system, rejected=rejected)
    _emit(to_json(report) if fmt == "json" else to_text(report), output)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("report")(report_cmd)
    app.command("compare")(compare_cmd)
    app.command("audit")(audit_cmd)
