"""`issuebench setup SRC`: find how to install and test a repository at a commit or date."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from issuebench.cli.common import check_choice, console, err_console, friendly_errors
from issuebench.cli.executor_opts import executor_option, opened_executor, ray_address_option
from issuebench.cli.next_step import command, say_next
from issuebench.cli.options import option
from issuebench.errors import OptionError
from issuebench.executors import run_one
from issuebench.setup import FILE_BUDGET, TEST_TIMEOUT, TIME_LIMIT


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("setup")(setup)


@friendly_errors
def setup(
    src: str = typer.Argument(..., help="A git clone, a source folder (e.g. an unpacked sdist) or a git URL."),
    commit: str | None = option("--commit"),
    date: str | None = option("--date", after="(default: the commit's date; for a folder, its newest file)."),
    output: Path | None = option("--output", None, after="Write the recipe here (.toml or .json)."),
    fmt: str = option("--format", after="table (lines for a person) | json (one JSON object on stdout)."),
    max_iterations: int = typer.Option(4, "--max-iterations", min=1, help="Builds to try at most."),
    model: str | None = option("--model", after="(or URL/NAME in one; the key from ISSUEBENCH_MODEL_API_KEY "
                               "or OPENAI_API_KEY). Optional: the rules need no model."),
    base_url: str | None = option("--base-url"),
    threshold: float = option("--pass-threshold", keep=("--threshold",), min=0.0, max=1.0),
    no_memory: bool = option("--no-resume", keep=("--no-memory",), after=": neither use nor save "
                             "remembered recipes."),
    repo_name: str | None = option("--name", None, keep=("--repo",), after="Recipes are remembered under it."),
    test_timeout: float = option("--test-timeout", TEST_TIMEOUT, after=": one test run of an attempt "
                                 f"(default {TEST_TIMEOUT:g}).", min=10.0),
    file_timeout: float = option("--file-timeout", FILE_BUDGET, min=0.0),
    time_limit: float = option("--setup-time-limit", TIME_LIMIT, keep=("--time-limit",),
                               after=f"(default {TIME_LIMIT:g}; 0: no limit).", min=0.0),
    quiet: bool = option("--quiet"),
    executor: str = executor_option(),
    ray_address: str = ray_address_option(),
) -> None:
    """Find install and test commands for a Python repository, historically accurate."""
    from issuebench.setup import setup_repository, write_recipe

    fmt = check_choice("--format", "table" if fmt == "text" else fmt, ("table", "json"))
    if executor != "local" and Path(src).exists():
        src = str(Path(src).resolve())  # a worker does not share our working directory
    model = endpoint_model(model, base_url)
    with opened_executor(executor, ray_address, 1) as pool:  # ray: the whole search runs on one worker
        result = run_one(pool, setup_repository, src, commit=commit, date=date, max_iterations=max_iterations,
                         model=model, threshold=threshold, memory=not no_memory, repo_name=repo_name,
                         test_timeout=test_timeout, file_budget=file_timeout, time_limit=time_limit or None,
                         progress=None if quiet else _progress)
    if output is not None:
        write_recipe(output, result.recipe())
    if fmt == "json":
        print(json.dumps(result.summary()))
    else:
        _print_text(result, output)
        if result.success and output is not None and _is_repository(src):  # what collect and synth take
            say_next(console, command("collect", src, options={"--recipe": output}),
                     command("synth", src, options={"--recipe": output, "--output": "synth-out"}))
    if not result.success:
        raise typer.Exit(1)


def _is_repository(src: str) -> bool:
    """A clone or a URL (collect and synth mine git history; an unpacked sdist has none)."""
    return "://" in src or src.startswith("git@") or (Path(src) / ".git").exists() or (Path(src) / "HEAD").is_file()


def endpoint_model(model: str | None, base_url: str | None) -> str | None:
    """--model NAME with --base-url URL (or $OPENAI_BASE_URL), as the other verbs take it, in the
    URL#NAME form setup's model client reads; a --model URL/NAME passes as it is."""
    if model is None or model.startswith(("http://", "https://")):
        return model
    url = base_url or os.environ.get("OPENAI_BASE_URL")
    if not url:
        raise OptionError("--model", f"{model!r} needs an endpoint", hint="pass --base-url URL (or set "
                          "OPENAI_BASE_URL), or give --model as URL/NAME")
    return f"{url.rstrip('/')}#{model}"


def _progress(line: str) -> None:
    from rich.markup import escape

    err_console.print(f"[dim]setup:[/] {escape(line)}", highlight=False)


def _print_text(result, output: Path | None) -> None:  # type: ignore[no-untyped-def]
    for attempt in result.attempts:
        line = (f"  {attempt.iteration}. python {attempt.python} \\[{attempt.origin}] -> {attempt.stage}"
                f" ({attempt.tests_passed}/{attempt.tests_run} passed, {attempt.tests_skipped} skipped, "
                f"{attempt.modules_unimportable} modules unimportable, {attempt.seconds:.1f}s)")
        console.print(line, highlight=False)
        if attempt.judged_on:
            console.print(f"     judged on {attempt.judged_on}", highlight=False)
        if attempt.files_cut:
            console.print(f"     cut for time (left out): {', '.join(attempt.files_cut)}", highlight=False)
        if attempt.refusal and attempt.stage != "build":
            console.print(f"     not accepted: {attempt.refusal}", highlight=False)
        if attempt.error_kind:
            console.print(f"     {attempt.error_kind}; fix: {attempt.fix or 'none found'}", highlight=False)
    verdict = "[green]accepted[/]" if result.success else f"[red]not accepted[/]: {result.reason}"
    kind = f"python {result.python}" if result.python else (result.spec.kind if result.spec else "no environment")
    console.print(f"{result.repo}: {verdict} — {kind}, {result.tests_passed}/{result.tests_run} "
                  f"tests passed, {result.iterations} iterations, {result.seconds:.1f}s", highlight=False)
    if result.offline_tests:
        console.print(f"  {len(result.offline_tests)} failing tests need the internet (the sandbox has none): "
                      "not counted against the environment", highlight=False)
    if result.lacking_system:
        console.print(f"  {result.lacking_system}: not counted against the environment", highlight=False)
    if result.suite_command:
        console.print(f"  suite: {result.suite_command}", highlight=False)
    if output is not None:
        err_console.print(f"recipe written to {output}", highlight=False, soft_wrap=True)
