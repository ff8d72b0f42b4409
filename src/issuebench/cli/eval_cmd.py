"""`issuebench eval`: grade predictions against a SWE-bench-format dataset."""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from issuebench.cli.common import (
    check_choice,
    check_folder,
    check_positive,
    console,
    err_console,
    friendly_errors,
    say_interrupted,
)
from issuebench.cli.eval_view import print_result, status_text
from issuebench.cli.executor_opts import executor_option, opened_executor, ray_address_option
from issuebench.cli.next_step import command, say_next
from issuebench.cli.options import instance_ids_option, option, workers_option
from issuebench.cli.progress import item_progress
from issuebench.datasets import load_predictions, load_tasks
from issuebench.errors import InputError, MissingSystemPiece, OptionError
from issuebench.models import InstanceReport, Prediction, Task

if TYPE_CHECKING:  # the harness is imported when the verb runs, so `issuebench --help` starts fast
    from issuebench.harness import EvalContext, EvaluationResult

# A run id names one folder: no separators, nothing a shell or a file system treats specially.
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
INTERRUPTED_LINE = "interrupted; rerun to resume"


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


@friendly_errors
def eval_command(
    dataset: str = option("--dataset", ...),
    predictions: str = option("--predictions", ..., after=", or 'gold'."),
    instance_ids: list[str] = instance_ids_option(),
    run_id: str = option("--run-id", None, after="Name of this run (default: a timestamp); rerunning an id "
                         "resumes it."),
    workers: int = workers_option("Instances"),
    timeout: float = option("--test-timeout", 1800.0, keep=("--timeout",),
                            after=": the tests of one instance (default 1800)."),
    repos: Path = option("--repos", None, keep=("--repos-dir",)),
    output: Path = option("--output", Path("."), after="Folder where logs/ and the summary go."),
    recipes: Path = option("--recipes"),
    split: str = option("--split"),
    no_sandbox: bool = option("--no-sandbox"),
    strict: bool = option("--strict"),
    flaky_reruns: int = option("--flaky-reruns"),
    allow_duplicates: bool = typer.Option(False, "--allow-duplicates", help="Keep the last of duplicate predictions."),
    python_fallback: str = option("--python-fallback"),
    no_resume: bool = option("--no-resume", keep=("--no-cache",), after=": ignore cached results and run every "
                             "instance again."),
    setup_fallback: bool = option("--setup-fallback"),
    offline: bool = option("--offline"),
    install_system_deps: bool = option("--install-system-deps"),
    backend: str = typer.Option("local", "--backend", help="local (uv + bubblewrap) | docker (reference images)."),
    wider_tests: str = typer.Option(None, "--wider-tests", help="covering | modules | suite: after the run, "
                                    "run each resolved prediction's other tests of the changed code under gold and "
                                    "under it, and name the tests it breaks (the official rate stays)."),
    executor: str = executor_option(),
    ray_address: str = ray_address_option(),
) -> None:
    """Grade predictions (patches) on a dataset; exits 0 when the run completed, whatever the verdicts."""
    from issuebench.harness import EvalOptions, RunInterrupted, RunLayout, build_context, run_locked
    from issuebench.setup import fallback_spec

    _check_options(backend, wider_tests, python_fallback, workers, timeout, repos, flaky_reruns)
    run_id = run_id or time.strftime("run-%Y%m%d-%H%M%S")
    _check_outputs(run_id, output)
    tasks, preds = _select(dataset, predictions, split, instance_ids, allow_duplicates)
    if _all_demo(tasks):
        from issuebench.demo import demo_repos_dir

        repos = repos or demo_repos_dir()
        python_fallback = "nearest"  # the demo's projects run on any Python 3.8+
    _require_system(backend, tasks, recipes, repos, install_system_deps)
    # One process per run folder, from here to the end (RunLocked, exit 2, when another holds it).
    with run_locked(RunLayout(output, run_id)):
        options = EvalOptions(output_dir=output, run_id=run_id, timeout=timeout, repos_dir=repos,
                              recipes_dir=recipes, no_sandbox=no_sandbox, strict=strict, offline=offline,
                              flaky_reruns=flaky_reruns,
                              use_cache=not no_resume, python_fallback=python_fallback, backend=backend,
                              setup_fallback=fallback_spec if setup_fallback else None)
        ctx = build_context(options)
        if getattr(ctx.sandbox, "name", "") == "none" and backend == "local":
            err_console.print("[yellow]warning:[/] running WITHOUT a sandbox (--no-sandbox): patches run unconfined")
        try:
            with opened_executor(executor, ray_address, workers) as pool, _progress(len(preds)) as on_result:
                result = _run(tasks, preds, ctx, workers, on_result, pool)
        except RunInterrupted as stop:
            raise say_interrupted(stop, f"{INTERRUPTED_LINE} (run id {run_id}: {stop.kept} finished instance(s) "
                                  f"kept, {stop.discarded} in flight discarded{_by_signal(stop)})") from None
        _say_other_results(result, run_id)
        print_result(console, result)
        if wider_tests is not None:
            _run_wider_tests(result, tasks, preds, ctx, wider_tests, workers)
        say_next(console, command("report", *(m.summary_path for m in result.models)))


def _check_options(backend: str, wider_tests: str | None, python_fallback: str, workers: int, timeout: float,
                   repos: Path | None, flaky_reruns: int = 1) -> None:
    """Each option's value checked before anything loads (OptionError, exit 2)."""
    if flaky_reruns < 0:
        raise OptionError("--flaky-reruns", f"must be 0 or more, got {flaky_reruns}")
    check_choice("--backend", backend, ("local", "docker"))
    if wider_tests is not None:
        check_choice("--wider-tests", wider_tests, ("covering", "modules", "suite"))
    check_choice("--python-fallback", python_fallback, ("error", "nearest"))
    check_positive("--workers", workers, integer=True)
    check_positive("--test-timeout", timeout)
    check_folder("--repos", repos)


def _require_system(backend: str, tasks: list[Task], recipes: Path | None, repos: Path | None,
                    install: bool) -> None:
    """What the run needs of this machine, said once before anything runs: the Docker engine, or
    the Debian packages the recipes name (the reference's images bring their own libraries)."""
    from issuebench.harness import require_system_packages

    if backend == "docker":
        _require_docker_engine()
    else:
        require_system_packages(tasks, recipes_dir=recipes, repos_dir=repos, install=install)


def _say_other_results(result: EvaluationResult, run_id: str) -> None:
    """Notes on what the run id already held: results reused, instance folders left out; and what
    the run did beyond its instances (uv's cache pruned)."""
    for note in result.notes:
        err_console.print(f"note: {note}", highlight=False)
    for model in result.models:
        if model.earlier_results:
            err_console.print(f"note: run id {run_id} already held results for {model.earlier_results} of these "
                              "instance(s); each was reused only if nothing that changes a verdict changed",
                              highlight=False)
        if model.other_instances:
            err_console.print(f"note: run id {run_id} also holds {len(model.other_instances)} instance folder(s) "
                              f"of an earlier run that this one did not evaluate ({', '.join(model.other_instances[:5])}"
                              f"{', ...' if len(model.other_instances) > 5 else ''}); its summary and reports "
                              "leave them out", highlight=False)


def _run_wider_tests(result: EvaluationResult, tasks: list[Task], preds: list[Prediction], ctx: EvalContext,
                     wider_tests: str, workers: int | None) -> None:
    """--wider-tests: each resolved prediction's other tests of the changed code, and what they say."""
    from issuebench.strength import after_eval, lines

    resolved = sum(r.status.value == "resolved" for m in result.models for r in m.reports)
    with item_progress(console, f"wider tests ({wider_tests})", resolved) as progress:
        found = after_eval(result, tasks, preds, ctx, wider_tests, workers=workers or 1,  # type: ignore[arg-type]
                           on_result=lambda r: progress.done(f"{r.instance_id}: {r.status}"))
    for line in lines(found, {m.model: len(m.reports) for m in result.models}):
        console.print(line, highlight=False, markup=False)


def _by_signal(stop: BaseException) -> str:
    """`, on SIGHUP` for a stop that was not Ctrl-C."""
    import signal

    from issuebench.interrupts import signal_of

    signum = signal_of(stop)
    return "" if signum == signal.SIGINT else f", on {signal.Signals(signum).name}"


def _run(tasks, preds, ctx, workers, on_result, executor=None):  # -> EvaluationResult
    from issuebench.harness import run_evaluation

    return run_evaluation(tasks, preds, ctx, workers=workers, on_result=on_result, executor=executor)


def _check_outputs(run_id: str, output: Path) -> None:
    """What the run writes must be writable before an hour of work, not after."""
    if not _RUN_ID.fullmatch(run_id) or run_id in (".", ".."):
        raise OptionError("--run-id", f"{run_id!r} is not a plain name",
                          hint="use letters, digits, '.', '_' and '-' (it names one folder)")
    if output.exists() and not output.is_dir():
        raise OptionError("--output", f"{output} is a file; the run needs a folder for logs/ and the summary",
                          hint="pass a folder (created if missing)")


def _select(dataset: str, predictions: str, split: str, instance_ids: list[str] | None,
            allow_duplicates: bool) -> tuple[list[Task], list[Prediction]]:
    """The tasks and predictions to run, with a warning for each thing left out and why."""
    tasks = load_tasks(dataset, split=split)
    if not tasks:
        raise InputError(dataset, "nothing to evaluate: the dataset holds no tasks")
    preds = load_predictions(predictions, tasks, allow_duplicates=allow_duplicates)
    if preds.unknown_ids:
        err_console.print(f"[yellow]warning:[/] {len(preds.unknown_ids)} prediction(s) name instances not in the "
                          f"dataset and were skipped: {', '.join(preds.unknown_ids[:10])}", highlight=False)
    if preds.unnamed:  # said once, however many: the run's folder and summary are named "unknown"
        err_console.print(f"[yellow]warning:[/] {len(preds.unnamed)} prediction(s) without model_name_or_path "
                          f"({', '.join(preds.unnamed[:3])}{', ...' if len(preds.unnamed) > 3 else ''}) are graded "
                          "as model 'unknown'", highlight=False)
    if preds.duplicates:
        err_console.print(f"[yellow]warning:[/] duplicate predictions, the last kept: {', '.join(preds.duplicates)}",
                          highlight=False)
    if not preds.predictions:
        why = (f"none of its {len(preds.unknown_ids)} prediction(s) names an instance of the dataset"
               if preds.unknown_ids else "it holds no predictions")
        raise InputError(predictions, f"nothing to evaluate: {why}",
                         hint="check that the predictions were made for this dataset (instance_id)")
    chosen = preds.predictions
    if instance_ids:
        wanted = list(dict.fromkeys(instance_ids))
        known = {t.instance_id for t in tasks}
        with_pred = {p.instance_id for p in chosen}
        absent = [i for i in wanted if i not in known]
        no_pred = [i for i in wanted if i in known and i not in with_pred]
        if absent:
            err_console.print(f"[yellow]warning:[/] --instance-ids not in the dataset: {', '.join(absent)}",
                              highlight=False)
        if no_pred:
            err_console.print(f"[yellow]warning:[/] --instance-ids without a prediction: {', '.join(no_pred)}",
                              highlight=False)
        tasks = [t for t in tasks if t.instance_id in set(wanted)]
        chosen = [p for p in chosen if p.instance_id in set(wanted)]
        if not chosen:
            raise OptionError("--instance-ids", "nothing to evaluate: none of the ids given is in the dataset "
                              "with a prediction", hint="check the ids against the dataset and the predictions")
    return tasks, chosen


def _all_demo(tasks: list[Task]) -> bool:
    from issuebench.demo import DEMO_OWNER

    return all(t.repo.partition("/")[0] == DEMO_OWNER for t in tasks)


def _require_docker_engine() -> None:
    """Say once, before anything runs, that there is no engine (not once per instance, in a log)."""
    from issuebench.harness import engine_available

    ok, why = engine_available()
    if not ok:
        raise MissingSystemPiece(f"--backend docker: {why}",
                                 hint="start the Docker engine (or set DOCKER_HOST), or use --backend local")


@contextmanager
def _progress(total: int) -> Iterator[Callable[[InstanceReport], None]]:
    """rich's live bar on a terminal; otherwise (CI logs, pipes) one line per finished instance."""
    if console.is_terminal:
        bar_view = Progress(TextColumn("[bold]eval"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            TextColumn("{task.description}"), console=console, transient=True)
        bar_view.start()
        try:
            bar = bar_view.add_task("", total=total)
            yield lambda r: bar_view.update(bar, advance=1, description=f"{r.instance_id}: {status_text(r.status)}")
        finally:
            # A closed terminal (SIGHUP) fails the bar's last refresh: that must not hide the interrupt.
            with contextlib.suppress(OSError):
                bar_view.stop()
        return
    done = 0

    def line(report: InstanceReport) -> None:
        nonlocal done
        done += 1
        console.print(f"[{done}/{total}] {report.instance_id}: {report.status.value}", highlight=False,
                      markup=False, soft_wrap=True)
        sys.stdout.flush()

    yield line

