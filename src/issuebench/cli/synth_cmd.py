"""`issuebench synth SRC`: break working code, keep what the tests catch, write graded tasks."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from issuebench.cli.common import check_positive, console, friendly_errors
from issuebench.cli.executor_opts import executor_option, opened_executor, ray_address_option
from issuebench.cli.next_step import command, say_next
from issuebench.cli.options import instance_ids_option, option, resolve_workers, workers_option
from issuebench.cli.tables import print_table


def register(app: typer.Typer) -> None:
    app.command("synth")(synth_command)


@friendly_errors
def synth_command(
    src: Path = typer.Argument(..., help="A git repository (a clone, or the output of `repo from-pypi`)."),
    output: Path = option("--output", ..., after="Folder for tasks.jsonl, repos/, yield.json."),
    commit: str = option("--commit", after="Its code is broken to make the tasks."),
    date: str = option("--date", after="when setup runs (default: the commit's date)."),
    recipe: Path = option("--recipe", after="Default: run setup now."),
    generators: str = typer.Option(None, "--generators", help="Comma-separated generator names "
                                   "(default: all procedural ones, combine, pr_mirror)."),
    limit: int = typer.Option(None, "--limit", min=1, help="Consider at most this many candidates."),
    max_tasks: int = option("--max-tasks", after="are kept.", min=1),
    instance_ids: list[str] = instance_ids_option(after="Here: candidate ids (`id` in candidates.jsonl) or the "
                                                  "instance ids of tasks a run kept."),
    workers: int = workers_option("Candidates validated"),
    scope: str = typer.Option("covering", "--scope", help="covering: run the tests that execute the changed "
                              "function; suite: the whole suite per candidate (slow; for comparison)."),
    timeout: float = option("--test-timeout", None, keep=("--timeout",), after="(default 5x the suite, at "
                            "least 60)."),
    seed: int = option("--seed", after="Seed for the order candidates are tried in."),
    name: str = option("--name"),
    model: str = option("--model", after=", or replay:FILE: for the `model` generator and the issue wording."),
    base_url: str = option("--base-url"),
    no_sandbox: bool = option("--no-sandbox"),
    executor: str = executor_option(),
    ray_address: str = ray_address_option(),
) -> None:
    """Make graded tasks by breaking working code; keep the bugs that covering tests catch."""
    from issuebench.errors import OptionError
    from issuebench.synth import SynthOptions, synthesize

    if scope not in ("covering", "suite"):
        raise OptionError("--scope", f"unknown scope {scope!r}", hint="use covering or suite")
    check_positive("--workers", workers, integer=True)
    check_positive("--test-timeout", timeout)
    workers = resolve_workers(workers)
    client = None
    if model:
        from issuebench.llm import make_model

        client = make_model(model, base_url=base_url)
    names = [n.strip() for n in generators.split(",") if n.strip()] if generators else None
    # With ray, -w is candidates in flight; each worker validates in a workbench of its own, and the
    # source repository must be at the same path on every node (as eval's --repos).
    with opened_executor(executor, ray_address, workers) as pool:
        opts = SynthOptions(output=output, commit=commit, date=date, recipe=recipe, generators=names, limit=limit,
                            max_tasks=max_tasks, workers=workers, scope=scope, timeout=timeout, seed=seed,
                            name=name, no_sandbox=no_sandbox, client=client, executor=pool,
                            only=frozenset(instance_ids) if instance_ids else None)
        result = synthesize(src, opts, progress=lambda line: console.print(f"  {line}", highlight=False))
    view = Table(title=f"synth yield ({result.summary['repo']})")
    # Short headers: the table must fit an 80-column terminal.
    columns = {"candidates": "cands", "kept": "kept", "syntax_error": "syntax", "equivalent": "no-op",
               "duplicate": "dup", "not_covered": "uncov", "nothing_fails": "no fail", "timeout": "t/o",
               "not_confirmed": "flaky", "error": "err"}
    view.add_column("generator", no_wrap=True, min_width=14)
    for header in columns.values():
        view.add_column(header, justify="right")
    for gen, counts in result.yield_table.items():
        view.add_row(gen, *(str(counts.get(c, 0)) for c in columns))
    print_table(console, view)
    console.print(f"{result.kept} task(s) kept in {result.seconds:.0f}s -> {output / 'tasks.jsonl'}",
                  highlight=False, soft_wrap=True)
    if result.kept:
        say_next(console, command("eval", options={"--dataset": output / "tasks.jsonl", "--predictions": "gold",
                                                   "--repos": output / "repos", "--no-sandbox": no_sandbox}))
