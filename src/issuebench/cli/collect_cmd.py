"""`issuebench collect`, `issuebench validate`, `issuebench repo from-pypi`: mine graded tasks."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
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
from issuebench.cli.executor_opts import executor_option, opened_executor, ray_address_option
from issuebench.cli.next_step import command, say_next
from issuebench.cli.options import instance_ids_option, option, resolve_workers, workers_option
from issuebench.cli.progress import ItemProgress, item_progress
from issuebench.cli.tables import print_table
from issuebench.collect import INSTALL_FAILED, PipelineTable, ValidateResult, Verdict, table_path_for
from issuebench.errors import InputError, IssuebenchError
from issuebench.models import Task
from issuebench.repos import find_repo

DEFAULT_TEST_TIMEOUT = 1800.0
repo_app = typer.Typer(help="Make repositories to mine tasks from.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("collect")(collect_command)
    app.command("validate")(validate_command)
    app.add_typer(repo_app, name="repo")


def write_tasks(path: Path, tasks: list[Task]) -> None:
    """SWE-bench-format JSONL: every reference field present, unset optional ones left out."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for task in tasks:
            row = task.model_dump(mode="json", exclude_none=True)
            fh.write(json.dumps(row) + "\n")


def print_funnel(table: PipelineTable, title: str) -> None:
    view = Table(title=title, show_header=True)
    view.add_column("stage")
    view.add_column("count", justify="right")
    for name, value in table.rows():
        view.add_row(name, value)
    print_table(console, view)


@friendly_errors
def collect_command(
    repo: str = typer.Argument(..., help="A local clone or a repository URL (cloned into the cache)."),
    since: str = typer.Option(None, "--since", help="Only commits after this date (git date syntax)."),
    until: str = typer.Option(None, "--until", help="Only commits before this date."),
    max_tasks: int = option("--max-tasks", keep=("--max",), after="are found (newest first)."),
    commits: bool = typer.Option(False, "--commits", help="Also take plain commits, not only merged PRs."),
    output: Path = option("--output", Path("tasks.candidates.jsonl"), after="JSONL of candidate tasks."),
    test_paths: list[str] = typer.Option(None, "--test-paths", help="Globs that mark test files (replace the "
                                         "default rules; repeat; '!glob' excludes)."),
    name: str = option("--name"),
    require_issue: bool = typer.Option(False, "--require-issue", help="Keep only PRs with a linked issue "
                                       "(needs GITHUB_TOKEN and the API)."),
    github_api: str = typer.Option(None, "--github-api", help="GitHub API base URL (default: "
                                   "$ISSUEBENCH_GITHUB_API or the public API)."),
    recipe: Path = option("--recipe", after="It is every task's environment."),
    no_setup: bool = typer.Option(False, "--no-setup", help="Do not run issuebench setup per version group."),
    setup_time_limit: float = option("--setup-time-limit", None, after="of one version group (default: "
                                     "setup's own limit).", min=10.0),
    quiet: bool = option("--quiet"),
    keep_changelog: bool = typer.Option(False, "--keep-changelog", help="Keep changelogs, news fragments, "
                                        "authors lists and doc pages in the gold patch (the reference "
                                        "leaves them out)."),
) -> None:
    """Mine candidate tasks (merged PRs, or commits) that change both tests and code."""
    import os

    from issuebench.collect import CollectOptions, collect

    if require_issue and not os.environ.get("GITHUB_TOKEN"):
        raise InputError(None, "--require-issue needs GITHUB_TOKEN: linked issues are looked up through the "
                         "GitHub API", hint="set GITHUB_TOKEN (and --github-api for another server), or drop "
                         "--require-issue to take statements from pull-request messages")
    opts = CollectOptions(since=since, until=until, max_tasks=max_tasks, include_commits=commits,
                          test_paths=tuple(test_paths or ()), repo_name=name, require_issue=require_issue,
                          github_api=github_api, recipe=recipe, run_setup=not no_setup,
                          keep_changelog=keep_changelog, setup_time_limit=setup_time_limit,
                          progress=None if quiet else _progress)
    result = collect(repo, opts)
    write_tasks(output, result.tasks)
    result.table.write(table_path_for(output))
    setups_path = output.with_name(output.name.rsplit(".", 1)[0] + ".setup.jsonl")
    with setups_path.open("w") as fh:
        for record in result.setups:
            fh.write(json.dumps(record) + "\n")
    print_funnel(result.table, f"collect {result.repo_name}")
    for record in result.setups:
        verdict = "accepted" if record.get("accepted") else f"not accepted: {record.get('reason')}"
        console.print(f"setup of version {record.get('version')}: {verdict} ({record.get('tests_passed', 0)}/"
                      f"{record.get('tests_run', 0)} passed, {record.get('tests_skipped', 0)} skipped, "
                      f"{record.get('modules_unimportable', 0)} modules unimportable)", highlight=False)
    console.print(f"{len(result.tasks)} candidate task(s) -> {output}"
                  + (f" (setup per version: {setups_path})" if result.setups else ""), soft_wrap=True)
    if result.tasks:
        say_next(console, command("validate", output, options={"--repos": clones_folder(result.repo_dir,
                                                                                       result.repo_name)}))


def clones_folder(repo_dir: Path, name: str) -> Path | None:
    """The --repos with which a later verb finds this clone as `name`: none when it finds it
    without (the clone cache), else the folder holding it (DIR/owner__name, DIR/owner/name, DIR/name)."""
    def found_in(folder: Path | None) -> bool:
        try:
            return find_repo(name, folder, allow_clone=False).resolve() == repo_dir.resolve()
        except IssuebenchError:
            return False

    if found_in(None):
        return None
    for folder in (repo_dir.parent, repo_dir.parent.parent):
        if found_in(folder):
            return folder
    err_console.print(f"note: later verbs find {name} in a folder of clones as DIR/{name.replace('/', '__')}; "
                      f"{repo_dir} is not named so: link it there and pass --repos DIR", highlight=False)
    return repo_dir.parent


def _progress(line: str) -> None:
    """A progress line on stderr; a line per step, with or without a terminal (CI logs)."""
    from rich.markup import escape

    err_console.print(f"[dim]collect:[/] {escape(line)}", highlight=False)


@friendly_errors
def validate_command(
    tasks_file: Path = typer.Argument(..., help="Candidate tasks (JSONL/JSON) from `collect`, any dataset, "
                                      "or 'demo'."),
    repos: Path = option("--repos", None, keep=("--repos-dir",)),
    instance_ids: list[str] = instance_ids_option(),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Runs per side; a test must agree in all of them."),
    output: Path = option("--output", Path("tasks.jsonl"), after="Validated tasks (SWE-bench JSONL)."),
    workers: int = workers_option("Tasks validated"),
    recipe: Path = option("--recipe", after="It is the environment of rows without `env`."),
    recipes: Path = option("--recipes"),
    timeout: float = option("--test-timeout", DEFAULT_TEST_TIMEOUT, keep=("--timeout",), after="(default 1800)."),
    no_sandbox: bool = option("--no-sandbox"),
    setup_fallback: bool = option("--setup-fallback", after="A kept row carries the recipe."),
    install_system_deps: bool = option("--install-system-deps"),
    executor: str = executor_option(),
    ray_address: str = ray_address_option(),
) -> None:
    """Run each task's tests before and after its gold patch; keep those with fail-to-pass tests."""
    from issuebench.collect import harness_runner, load_recipe, validate
    from issuebench.datasets import load_tasks
    from issuebench.harness import require_system_packages

    if not tasks_file.exists() and str(tasks_file) != "demo":
        raise InputError(tasks_file, "no such file", hint="pass the output of `issuebench collect`, or 'demo'")
    check_folder("--repos", repos)
    check_positive("--workers", workers, integer=True)
    check_positive("--test-timeout", timeout)
    workers = resolve_workers(workers)
    # Candidates have no test lists yet: finding them is what validation does.
    tasks = pick_instances(load_tasks(str(tasks_file), require_tests=False), instance_ids)
    spec = load_recipe(recipe) if recipe else None
    with tempfile.TemporaryDirectory(prefix="issuebench-validate-") as work:
        runner, with_env = harness_runner(repos_dir=repos, recipe=spec, recipes_dir=recipes, timeout=timeout,
                                          no_sandbox=no_sandbox, work_dir=Path(work), setup_fallback=setup_fallback)
        prepared, unprepared = _with_environments(tasks, with_env)
        # Said once, before any task runs, as eval does (each would otherwise fail its build alone).
        require_system_packages(prepared, recipes_dir=recipes, repos_dir=repos, install=install_system_deps)

        with opened_executor(executor, ray_address, workers) as pool, \
                item_progress(console, "validate", len(prepared)) as progress:
            result = validate(prepared, runner, repeats=repeats, workers=workers,
                              on_verdict=_verdict_lines(progress), executor=pool)
    _write_validated(tasks_file, output, result, unprepared, len(tasks))
    if result.kept:  # eval of the gold patches: what a kept task must pass, with what made it run here
        say_next(console, command("eval", options={
            "--dataset": output, "--predictions": "gold", "--repos": repos, "--recipes": recipes,
            "--test-timeout": timeout if timeout != DEFAULT_TEST_TIMEOUT else None, "--no-sandbox": no_sandbox,
            "--setup-fallback": setup_fallback}))


def _write_validated(tasks_file: Path, output: Path, result: ValidateResult, unprepared: list[tuple[Task, str]],
                     total: int) -> None:
    """The kept tasks, the rejected and per-run files and the funnel (continuing collect's), and
    what was written where."""
    table = result.table
    for task, why in unprepared:
        err_console.print(f"{task.instance_id}: [yellow]{INSTALL_FAILED}[/]: {why[:200]}", highlight=False)
        table.reject(INSTALL_FAILED)
    collected = table_path_for(tasks_file)
    if collected.exists():  # continue the funnel that `collect` started
        table = PipelineTable.from_dict(json.loads(collected.read_text())).merge(table)
    write_tasks(output, result.kept)
    rejected_path, runs_path = _write_rejected(output, result, unprepared), _write_runs(output, result)
    table.write(table_path_for(output))
    print_funnel(table, "validate")
    console.print(f"{len(result.kept)} of {total} task(s) kept -> {output} (rejections: {rejected_path}; "
                  f"per-run outcomes: {runs_path})", soft_wrap=True)


def _with_environments(tasks: list[Task],
                       with_env: Callable[[Task], Task]) -> tuple[list[Task], list[tuple[Task, str]]]:
    """The tasks with their environment, and those without one with why (rejected; the rest go on)."""
    prepared, unprepared = [], []
    for task in tasks:
        try:
            prepared.append(with_env(task))
        except Exception as exc:  # no recipe for this row: it is rejected, the rest go on
            unprepared.append((task, str(exc)))
    return prepared, unprepared


def _verdict_lines(progress: ItemProgress) -> Callable[[Verdict], None]:
    """What validate says of each verdict: a line per task, on a terminal (above the bar) and off
    it, counted, with its notes below."""
    def report(verdict: Verdict) -> None:
        progress.advance(f"{verdict.task.instance_id}: {'kept' if verdict.kept else verdict.reason}")
        mark = "[green]kept[/]" if verdict.kept else f"[yellow]{escape(verdict.reason)}[/]"
        extra = f" ({len(verdict.task.FAIL_TO_PASS)} F2P, {len(verdict.task.PASS_TO_PASS)} P2P)" \
            if verdict.kept else (f": {escape(verdict.detail[:160])}" if verdict.detail else "")
        console.print(f"{escape(progress.counter())} {verdict.task.instance_id}: {mark}{extra}",
                      highlight=False, soft_wrap=True)
        for note in verdict.notes:
            console.print(f"  {escape(note)}", highlight=False)

    return report


def _write_rejected(output: Path, result: ValidateResult, unprepared: list[tuple[Task, str]]) -> Path:
    """<output>.rejected.jsonl: each task left out, with why."""
    rejected_path = output.with_name(output.name.rsplit(".", 1)[0] + ".rejected.jsonl")
    with rejected_path.open("w") as fh:
        for v in result.verdicts:
            if not v.kept:
                fh.write(json.dumps({"instance_id": v.task.instance_id, "reason": v.reason,
                                     "detail": v.detail, "flaky": v.flaky, "broken": v.broken,
                                     "notes": v.notes}) + "\n")
        for task, why in unprepared:
            fh.write(json.dumps({"instance_id": task.instance_id, "reason": INSTALL_FAILED,
                                 "detail": why}) + "\n")
    return rejected_path


def _write_runs(output: Path, result: ValidateResult) -> Path:
    """<output>.runs.jsonl: every task's per-run outcomes and why each test is in neither list,
    what validate saw."""
    runs_path = output.with_name(output.name.rsplit(".", 1)[0] + ".runs.jsonl")
    with runs_path.open("w") as fh:
        for v in result.verdicts:
            fh.write(json.dumps({"instance_id": v.task.instance_id, "kept": v.kept, "reason": v.reason,
                                 "dropped": v.dropped, "before": v.before, "after": v.after,
                                 "notes": v.notes}) + "\n")
    return runs_path


@repo_app.command("from-pypi")
@friendly_errors
def from_pypi_command(
    name: str = typer.Argument(..., help="Project name on the package index pip is configured for."),
    max_releases: int = typer.Option(None, "--max-releases", help="Only the newest N final releases."),
    output: Path = option("--output", None, after="Repository folder (default: the clone cache, where eval "
                          "and validate find it)."),
) -> None:
    """Build a git history with one dated, tagged commit per release, from the project's sdists."""
    from issuebench.collect import build_pypi_history

    path = build_pypi_history(name, output, max_releases=max_releases,
                              progress=lambda line: console.print(f"  {line}", highlight=False))
    console.print(f"repository: {path}", soft_wrap=True)
    say_next(console, command("collect", path, options={"--commits": True}))
