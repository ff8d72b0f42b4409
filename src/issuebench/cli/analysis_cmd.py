"""CLI verbs of the analysis part: report, compare, audit, contamination, perturb.

Each command parses its options, calls one function of issuebench.analysis, and prints or writes
the result. No computation lives here.
"""

from __future__ import annotations

from pathlib import Path

import typer

from issuebench.cli.common import (
    check_folder,
    check_positive,
    console,
    err_console,
    friendly_errors,
    pick_instances,
)
from issuebench.cli.next_step import command, say_next
from issuebench.cli.options import instance_ids_option, option, resolve_workers, workers_option
from issuebench.cli.progress import item_progress
from issuebench.cli.tables import print_table
from issuebench.errors import InputError
from issuebench.strength import run_test_strength, strength_json, strength_text

REPORT_FORMATS = ("table", "json", "md", "csv", "html")


def _check_format(fmt: str, allowed: tuple[str, ...]) -> str:
    """Every verb names its human-readable output `table` (`text`, as `setup` says, is the same)."""
    fmt = "table" if fmt == "text" else fmt
    if fmt not in allowed:
        raise InputError(None, f"unknown format {fmt!r}", field="--format", hint=f"use one of {', '.join(allowed)}")
    return fmt


OUTPUT_HELP = "Write here instead of stdout."


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
    from issuebench.analysis import load_dataset

    return load_dataset(dataset)


@friendly_errors
def report_cmd(
    runs: list[Path] = typer.Argument(..., help="Run summaries, run folders or folders of instance folders."),
    fmt: str = option("--format", after="table | json | md | csv | html"),
    output: Path | None = option("--output", None, after=OUTPUT_HELP),
    dataset: str | None = option("--dataset", None, after="Rates are over this set."),
    predictions: list[Path] = option("--predictions", [], after=", one or more (e.g. an agent's "
                                     "DIR/preds.jsonl): cost, usage, steps."),
) -> None:
    """Resolved rate with a 95% Wilson interval, statuses, outcome categories, per-repo rates, cost, agent steps."""
    from issuebench.analysis import render, report_from_paths, to_rich_tables

    fmt = _check_format(fmt, REPORT_FORMATS)
    report = report_from_paths(runs, tasks=_load_dataset(dataset), prediction_files=predictions)
    if fmt == "table" and output is None:
        for table in to_rich_tables(report):
            print_table(console, table)
        for s in report.systems:
            for note in s.notes:
                console.print(f"[yellow]note[/] {s.name}: {note}", highlight=False)
        return
    _emit(render(report, "md" if fmt == "table" else fmt), output)


def _one_system(path: Path, label: str):
    from issuebench.analysis import load_runs

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
    fmt: str = option("--format", after="table | json | md"),
    output: Path | None = option("--output", None, after=OUTPUT_HELP),
    n_boot: int = typer.Option(10_000, "--bootstrap", help="Bootstrap resamples."),
    seed: int = option("--seed", after="Seed of the bootstrap (same seed, same interval)."),
) -> None:
    """Paired difference over shared tasks: bootstrap interval, exact McNemar, tasks needed."""
    from issuebench.analysis import compare_runs, comparison_json, comparison_markdown, comparison_text

    fmt = _check_format(fmt, ("table", "json", "md"))
    a, b = _one_system(run_a, "A"), _one_system(run_b, "B")
    if not set(a.instances) & set(b.instances):  # a paired comparison over nothing says nothing
        raise InputError(None, f"{run_a} and {run_b} share no task, so there is nothing to compare: pass two "
                         "runs over the same dataset (the same instance ids)")
    if a.name == b.name:
        a.name, b.name = f"A:{a.name}", f"B:{b.name}"
    result = compare_runs(a, b, n_boot=n_boot, seed=seed)
    render = {"table": comparison_text, "json": comparison_json, "md": comparison_markdown}[fmt]
    _emit(render(result), output)


@friendly_errors
def audit_cmd(
    dataset: str = typer.Argument(..., help="Tasks: .json, .jsonl, .parquet, a folder or a hub name."),
    fmt: str = option("--format", after="table | json"),
    output: Path | None = option("--output", None, after=OUTPUT_HELP),
    instance_ids: list[str] = instance_ids_option(),
    run: Path | None = option("--run", after=": correlate each characteristic with success."),
    alternatives: Path | None = typer.Option(
        None, "--alternatives", help="Predictions holding known-valid alternative fixes: run them and list rejects."),
    output_dir: Path = typer.Option(Path("audit-output"), "--output-dir", help="Where --alternatives runs write."),
    repos_dir: Path | None = option("--repos", None, keep=("--repos-dir",), after="For --alternatives and "
                                    "--test-strength."),
    no_sandbox: bool = option("--no-sandbox"),
    timeout: float = option("--test-timeout", 1800.0, keep=("--timeout",), after=": the tests of one instance "
                            "for --alternatives and --test-strength (default 1800)."),
    test_strength: bool = typer.Option(False, "--test-strength", help="Mutate the code the gold patch changed and "
                                       "report the share of mutants each task's own tests reject."),
    mutants: int = typer.Option(10, "--mutants", help="With --test-strength: at most this many mutants per task."),
    workers: int = workers_option("With --test-strength: tasks"),
) -> None:
    """Lite rules rule by rule, Verified-style checks, characteristics (and their link to success)."""
    from issuebench.analysis import audit_json, audit_tasks, audit_text

    fmt = _check_format(fmt, ("table", "json"))
    check_folder("--repos", repos_dir)
    check_positive("--workers", workers, integer=True)
    check_positive("--test-timeout", timeout)
    tasks = pick_instances(_load_dataset(dataset), instance_ids)
    if test_strength:

        # Progress on stderr: stdout is the report (--format json may be piped on).
        with item_progress(err_console, "test strength", len(tasks)) as progress:
            results = run_test_strength(tasks, output_dir=output_dir, repos_dir=repos_dir, no_sandbox=no_sandbox,
                                        timeout=timeout, mutants=mutants, workers=resolve_workers(workers),
                                        on_result=lambda r: progress.done(f"{r.instance_id}: {r.status}"))
        _emit(strength_json(results) if fmt == "json" else strength_text(results), output)
        return
    system = _one_system(run, "--run") if run is not None else None
    rejected = None
    if alternatives is not None:
        from issuebench.analysis import dynamic_check, harness_evaluator
        from issuebench.datasets import load_predictions

        preds = load_predictions(alternatives, tasks).predictions
        evaluate = harness_evaluator(output_dir=output_dir, repos_dir=repos_dir, no_sandbox=no_sandbox,
                                     timeout=timeout)
        rejected = dynamic_check(tasks, preds, evaluate)
    report = audit_tasks(tasks, run=system, rejected=rejected)
    _emit(audit_json(report) if fmt == "json" else audit_text(report), output)


@friendly_errors
def contamination_cmd(
    dataset: str = typer.Argument(..., help="Tasks (created_at is read for the date split)."),
    run: Path | None = option("--run", after=": compare its rate before and after --cutoff."),
    cutoff: str | None = typer.Option(None, "--cutoff", help="ISO date, e.g. a model's training cutoff."),
    threshold: float = typer.Option(0.7, "--threshold", help="Jaccard similarity that counts as a near-duplicate."),
    fmt: str = option("--format", after="table | json"),
    output: Path | None = option("--output", None, after=OUTPUT_HELP),
) -> None:
    """Probes for memorization: a date split with a one-sided test, and near-duplicate statements."""
    import json
    from dataclasses import asdict

    from issuebench.analysis import date_split, near_duplicates

    fmt = _check_format(fmt, ("table", "json"))
    tasks = _load_dataset(dataset)
    doc: dict = {"tasks": len(tasks)}
    lines = [f"{len(tasks)} tasks"]
    if run is not None:
        if cutoff is None:
            raise InputError(None, "--run needs --cutoff", field="--cutoff", hint="e.g. --cutoff 2023-10-01")
        split = date_split(_one_system(run, "--run"), tasks, cutoff)
        doc["date_split"] = asdict(split)
        b, a, t = split.before, split.after, split.test
        lines += [f"before {cutoff}: {b.resolved}/{b.total} ({100 * b.rate:.1f}%, 95% CI "
                  f"{100 * b.interval.low:.1f} to {100 * b.interval.high:.1f}%)",
                  f"after:  {a.resolved}/{a.total} ({100 * a.rate:.1f}%, 95% CI "
                  f"{100 * a.interval.low:.1f} to {100 * a.interval.high:.1f}%)",
                  "one-sided p (rate lower after): normal approx. "
                  + ("n/a" if t.p_normal is None else f"{t.p_normal:.4g}")
                  + ", Fisher exact " + ("n/a" if t.p_exact is None else f"{t.p_exact:.4g}")]
        if split.undated:
            lines.append(f"{len(split.undated)} task(s) without a usable created_at were left out")
    pairs = near_duplicates(tasks, threshold=threshold)
    doc["near_duplicates"] = [asdict(p) for p in pairs]
    lines.append(f"near-duplicate statements (Jaccard >= {threshold}): {len(pairs)}")
    lines += [f"  {p.a} ~ {p.b}: {p.jaccard:.2f}{' (identical)' if p.identical else ''}" for p in pairs]
    _emit(json.dumps(doc, indent=2) if fmt == "json" else "\n".join(lines) + "\n", output)


@friendly_errors
def perturb_cmd(
    dataset: str = typer.Argument(..., help="Tasks to copy."),
    output: Path = option("--output", ..., after="Where to write the perturbed .jsonl."),
    reword: bool = typer.Option(False, "--reword", help="Reword statements (code, examples untouched)."),
    rename: bool = typer.Option(False, "--rename", help="Rename one symbol through patches, tests, statement."),
    repos_dir: Path | None = option("--repos", None, keep=("--repos-dir",), after="With --rename: rewrite these "
                                    "clones too (new commit, new base_commit)."),
) -> None:
    """Write a perturbed copy of a dataset, to re-evaluate and compare with the original."""
    from issuebench.analysis import rename_task_and_repository, reword_task
    from issuebench.datasets import write_jsonl

    if not (reword or rename):
        raise InputError(None, "nothing to do", hint="pass --reword, --rename or both")
    check_folder("--repos", repos_dir)
    tasks = _load_dataset(dataset)
    out, skipped = [], []
    for task in tasks:
        if reword:
            task = reword_task(task)
        if rename:
            repo_dir = None
            if repos_dir is not None:
                from issuebench.repos import find_repo

                repo_dir = find_repo(task.repo, repos_dir, allow_clone=False)
            renamed = rename_task_and_repository(task, repo_dir)
            if renamed is None:
                skipped.append(task.instance_id)
                continue
            task = renamed
        out.append(task.model_dump(mode="json", exclude_none=True))
    write_jsonl(output, out)
    console.print(f"wrote {len(out)} task(s) to {output}", highlight=False, soft_wrap=True)
    if skipped:
        console.print(f"[yellow]{len(skipped)} task(s) had no symbol to rename and were left out:[/] "
                      + ", ".join(skipped[:20]), highlight=False)
    if out:  # the copy is graded as the original was; gold shows it still holds
        say_next(console, command("eval", options={"--dataset": output, "--predictions": "gold",
                                                   "--repos": repos_dir if rename else None}))


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("report")(report_cmd)
    app.command("compare")(compare_cmd)
    app.command("audit")(audit_cmd)
    app.command("contamination")(contamination_cmd)
    app.command("perturb")(perturb_cmd)
