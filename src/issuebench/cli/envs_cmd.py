"""`issuebench envs ...`: list, pre-build, prune and measure environments; import reference recipes."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

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
from issuebench.envs import (
    EnvBuilder,
    env_path,
    install_command,
    install_packages,
    list_envs,
    missing_packages,
    prune,
    real_disk_usage,
    recipe_packages,
)
from issuebench.errors import InputError, IssuebenchError
from issuebench.models import EnvSpec, Task

envs_app = typer.Typer(help="Environments: list, build, prune, disk use, import reference recipes.",
                       no_args_is_help=True)


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} TB"


def _parse_size(text: str) -> int:
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, re.I)
    if not match:
        raise InputError(None, f"not a size: {text!r}", field="--max-env-disk", hint="write e.g. 20G or 500M")
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}[match.group(2).upper()]
    return int(float(match.group(1)) * scale)


def _root(cache_dir: Path | None) -> Path:
    from issuebench import config

    return cache_dir if cache_dir is not None else config.envs_dir()


@envs_app.command("ls")
@friendly_errors
def ls_cmd(cache_dir: Path | None = option("--cache-dir")) -> None:
    """List environments: hash, state, python, cutoff date, size, last used."""

    records = list_envs(_root(cache_dir))
    table = Table("hash", "state", "python", "exclude_newer", "size (apparent)", "last used", "reason")
    for r in records:
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.last_used)) if r.last_used else "-"
        table.add_row(r.env_hash, r.state, r.python or "-", r.exclude_newer or "-", _size(r.apparent_bytes), used,
                      r.reason[:80])
    print_table(console, table)
    console.print(f"{len(records)} environment(s)")


@envs_app.command("du")
@friendly_errors
def du_cmd(cache_dir: Path | None = option("--cache-dir")) -> None:
    """Disk used by all environments: real (hard links counted once) vs the sum of apparent sizes."""

    root = _root(cache_dir)
    records = [r for r in list_envs(root) if r.state == "built"]
    paths = [env_path(root, r.env_hash) for r in records]
    real = real_disk_usage(paths)
    apparent = sum(r.apparent_bytes for r in records)
    console.print(f"{len(records)} built environment(s) in {root}")
    console.print(f"real disk (hard links once): {_size(real)}")
    console.print(f"sum of apparent sizes:       {_size(apparent)}")
    if real:
        console.print(f"sharing ratio:               {apparent / real:.1f}x")


@envs_app.command("prune")
@friendly_errors
def prune_cmd(
    all_: bool = typer.Option(False, "--all", help="remove every environment"),
    failed: bool = typer.Option(False, "--failed", help="remove failed and incomplete builds"),
    max_env_disk: str | None = typer.Option(None, "--max-env-disk",
                                            help="remove least recently used envs until real disk use fits, e.g. 20G"),
    cache_dir: Path | None = option("--cache-dir"),
) -> None:
    """Remove environments (all, failed, or least recently used beyond a disk budget)."""

    if not (all_ or failed or max_env_disk):
        raise IssuebenchError("say what to prune", hint="pass --all, --failed or --max-env-disk SIZE")
    removed = prune(_root(cache_dir), everything=all_, failed_only=failed,
                          max_bytes=_parse_size(max_env_disk) if max_env_disk else None)
    console.print(f"removed {len(removed)} environment(s)" + (": " + ", ".join(removed) if removed else ""))


@envs_app.command("build")
@friendly_errors
def build_cmd(
    dataset: str = typer.Argument(..., help="tasks file/folder, a hub name, or `demo`"),
    workers: int = workers_option("Environments built"),
    recipes: Path | None = option("--recipes", after="They win over the packaged ones."),
    repos_dir: Path | None = option("--repos", None, keep=("--repos-dir",)),
    instance_ids: list[str] | None = instance_ids_option(),
    python_fallback: str = option("--python-fallback"),
    rebuild: bool = option("--no-resume", keep=("--rebuild",), after=": build again even what is built or "
                           "recorded as failed."),
    offline: bool = option("--offline"),
) -> None:
    """Pre-build the environments a dataset needs, each once, several at a time."""
    from issuebench.datasets import load_tasks

    check_folder("--repos", repos_dir)
    check_positive("--workers", workers, integer=True)
    workers = resolve_workers(workers)
    tasks = pick_instances(load_tasks(dataset, require_tests=False), instance_ids)  # building needs no test lists
    builder = EnvBuilder(python_fallback=python_fallback, offline=offline, rebuild=rebuild)
    jobs, problems = _env_jobs(tasks, recipes, repos_dir, offline)
    console.print(f"{len(tasks)} task(s) need {len(jobs)} environment(s)")
    for line in problems:  # said now: the builds may take minutes
        err_console.print(f"[red]failed[/] {escape(line)}", highlight=False)
    ok = _build_all(builder, jobs, workers, problems)
    console.print(f"{ok} built, {len(problems)} failed")
    from issuebench.harness import prune_uv_cache

    if pruned := prune_uv_cache():
        err_console.print(f"note: {pruned}", highlight=False)
    if problems:
        raise typer.Exit(1)
    say_next(console, command("eval", options={  # the gold patches, in the environments just built
        "--dataset": dataset, "--predictions": "gold", "--instance-ids": instance_ids, "--repos": repos_dir,
        "--recipes": recipes, "--python-fallback": python_fallback if python_fallback != "error" else None,
        "--offline": offline}))


def _env_jobs(tasks: list[Task], recipes: Path | None, repos_dir: Path | None,
              offline: bool) -> tuple[dict[str, tuple[Task, EnvSpec, Path]], list[str]]:
    """One (task, spec, clone) per environment hash, the first task that needs it; and the tasks
    whose clone or recipe is not found, with why."""
    from issuebench.harness import resolve_task_spec, spec_for_run
    from issuebench.repos import find_repo

    jobs: dict[str, tuple[Task, EnvSpec, Path]] = {}
    problems: list[str] = []
    for task in tasks:
        try:
            source = find_repo(task.repo, repos_dir, allow_clone=not offline)
            # The spec eval runs the task with, so that what is built here is what eval uses.
            spec = spec_for_run(task, resolve_task_spec(task, recipes, source))
        except IssuebenchError as exc:
            problems.append(f"{task.instance_id}: {exc.message}")
            continue
        jobs.setdefault(spec.env_hash(), (task, spec, source))
    return jobs, problems


def _build_workspace(task: Task, source: Path) -> Path:
    from issuebench.harness import create_workspace

    for commit in dict.fromkeys(c for c in (task.environment_setup_commit, task.base_commit) if c):
        try:
            return create_workspace(source, commit, repo=task.repo, when=task.created_at)
        except IssuebenchError:
            if commit == task.base_commit:
                raise
    raise IssuebenchError(f"{task.instance_id}: no commit to build its environment from")


def _build_all(builder: EnvBuilder, jobs: dict[str, tuple[Task, EnvSpec, Path]], workers: int,
               problems: list[str]) -> int:
    """Build each job's environment, `workers` at a time, a line per environment as it is built or
    fails (its failure added to `problems`); the number built."""
    from issuebench.harness import ensure_env_with_overlay, remove_workspace

    def build_one(task: Task, spec: EnvSpec, source: Path) -> str:
        # Built where eval builds a missing one: at the task's environment_setup_commit (as the
        # reference builds its environment images), else, or when the clone lacks it, its base.
        ws = _build_workspace(task, source)
        try:
            env = ensure_env_with_overlay(builder, spec, ws)
            return f"{env.env_hash} python {env.python_version} ({task.repo} {task.version})"
        finally:
            remove_workspace(ws)

    ok = 0
    with item_progress(console, "envs build", len(jobs)) as progress, \
            ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(build_one, *job): h for h, job in jobs.items()}
        for future in as_completed(futures):  # a line per environment as it is built or fails
            try:
                built = future.result()
                ok += 1
                progress.advance(f"built {built}")
                console.print(f"{escape(progress.counter())} [green]built[/] {escape(built)}", highlight=False,
                              soft_wrap=True)
            except IssuebenchError as exc:
                problems.append(f"{futures[future]}: {exc.message}")
                progress.advance(f"failed {futures[future]}")
                err_console.print(f"{escape(progress.counter())} [red]failed[/] {escape(problems[-1])}",
                                  highlight=False)
    return ok


@envs_app.command("import-swebench")
@friendly_errors
def import_cmd(
    output: Path | None = option("--output", None, after="Folder for the recipes (default: the packaged ones)."),
    source: Path | None = typer.Option(None, "--from", help="A swebench wheel, sdist or source folder."),
    version: str = option("--swebench-version", keep=("--version",)),
) -> None:
    """Write recipes from the reference harness's spec tables (one TOML per Python repository)."""
    from issuebench.envs import import_swebench

    results = import_swebench(output, source, version)
    for r in results:
        console.print(f"[bold]{r.repo}[/]: {len(r.versions)} version(s) -> {r.path}")
        for item in r.untranslated:
            console.print(f"    not translated: {item}", highlight=False)
    console.print(f"{len(results)} recipe file(s) written")


@envs_app.command("system-deps")
@friendly_errors
def system_deps_cmd(
    recipes: Path | None = option("--recipes", after="Default: the packaged ones."),
    check: bool = typer.Option(False, "--check", help="only say what is missing; install nothing"),
) -> None:
    """Install the Debian packages the recipes name in `system_packages` (apt-get, as root)."""
    from issuebench.envs import packaged_recipes_dir

    wanted = recipe_packages(recipes or packaged_recipes_dir())
    for repo, names in wanted.items():
        console.print(f"{repo}: {', '.join(names)}", highlight=False)
    absent = missing_packages(p for names in wanted.values() for p in names)
    if not absent:
        console.print("every system package the recipes name is installed")
        return
    command = install_command(absent)
    if check:
        console.print(f"missing: {', '.join(absent)} (install with: {command})", highlight=False)
        raise typer.Exit(1)
    install_packages(absent)
    console.print(f"installed: {', '.join(absent)}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.add_typer(envs_app, name="envs")
