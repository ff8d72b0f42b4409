"""`issuebench infer`: retrieval + prompt + one model call per task → OUTPUT/preds.jsonl for `eval`."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from issuebench.cli.common import check_positive, console, err_console, friendly_errors
from issuebench.cli.next_step import command, say_next
from issuebench.cli.options import instance_ids_option, option, resolve_workers, workers_option
from issuebench.cli.predict_common import route_warnings, select_tasks
from issuebench.cli.progress import item_progress
from issuebench.cli.tables import print_table
from issuebench.errors import IssuebenchError


def register(app: typer.Typer) -> None:
    app.command("infer")(infer_command)


@friendly_errors
def infer_command(
    dataset: str = option("--dataset", ...),
    output: Path = option("--output", ..., after="Run folder: preds.jsonl, prompts/ and text.jsonl go here."),
    model: str = option("--model", None, after=", or replay:FILE."),
    base_url: str = option("--base-url"),
    retrieval: str = typer.Option("bm25", "--retrieval", help="bm25 (over the repository at the base commit) or oracle (the files the gold patch edits)."),
    context_tokens: int = typer.Option(27_000, "--context-tokens", help="Token budget of the prompt (about 4 characters a token)."),
    prompt: str = typer.Option("patch", "--prompt", help="Prompt style: patch (the paper's) or fullfile."),
    instance_ids: list[str] = instance_ids_option(),
    workers: int = workers_option("Instances"),
    repos: Path = option("--repos", None, keep=("--repos-dir",)),
    split: str = option("--split"),
    write_text: bool = typer.Option(False, "--write-text", help="Also write OUTPUT/text.jsonl: the tasks with the prompt as `text`."),
    text_only: bool = typer.Option(False, "--text-only", help="Only build OUTPUT/text.jsonl; call no model."),
    no_readme: bool = typer.Option(False, "--no-readme", help="Leave the README out of the prompt."),
    prices: Path = option("--prices"),
    no_resume: bool = option("--no-resume", after=": ask again for instances already in preds.jsonl (their "
                             "rows are replaced)."),
    offline: bool = option("--offline"),
) -> None:
    """Ask a model for one patch per task, from retrieved files; writes OUTPUT/preds.jsonl."""
    from issuebench.infer import STYLES, InferConfig, run_infer
    from issuebench.llm import DEFAULT_PRICES, make_model

    if retrieval not in ("bm25", "oracle"):
        raise IssuebenchError(f"unknown retrieval {retrieval!r}", hint="use --retrieval bm25 or --retrieval oracle")
    if prompt not in STYLES:
        raise IssuebenchError(f"unknown prompt style {prompt!r}", hint=f"use --prompt {' or '.join(STYLES)}")
    if model is None and not text_only:
        raise IssuebenchError("infer needs --model", hint="or --text-only to write the retrieval dataset alone")
    check_positive("--workers", workers, integer=True)
    workers = resolve_workers(workers)
    route_warnings()
    given_repos = repos  # the demo's are found by eval itself
    tasks, repos, _ = select_tasks(dataset, split, instance_ids, repos)
    llm = None if text_only else make_model(model, base_url=base_url, prices=prices or DEFAULT_PRICES)
    cfg = InferConfig(retrieval=retrieval, context_tokens=context_tokens, style=prompt, readme=not no_readme,
                      repos_dir=repos, allow_clone=not offline)
    started = time.monotonic()
    with item_progress(console, "infer", len(tasks)) as progress:
        result = run_infer(tasks, llm, output, cfg, workers=workers, resume=not no_resume,
                           write_text=write_text or text_only,
                           on_result=lambda r: progress.done(f"{r['instance_id']}: {r['status']}"))
    if result.records:
        print_table(console, records_table(result.records, text_only=text_only))
    if result.skipped:
        console.print(f"{len(result.skipped)} instance(s) already in {output / 'preds.jsonl'} (resumed; --no-resume asks again)")
    cost = sum(r.get("cost") or 0.0 for r in result.records)
    console.print(f"{len(result.records)} done in {time.monotonic() - started:.1f}s, ${cost:.4f} spent")
    infra = [r for r in result.records if r["status"] in ("api_error", "no_context", "error")]
    if infra:
        err_console.print(f"[yellow]{len(infra)} instance(s) stopped by the infrastructure, not by the task "
                          "(no prediction written): rerun the same command to retry them[/]")
    if text_only or write_text:
        console.print(f"Retrieval dataset: {output / 'text.jsonl'}")
    if not text_only:
        preds = output / "preds.jsonl"
        console.print(f"Predictions: {preds}", highlight=False, soft_wrap=True)
        say_next(console, command("eval", options={
            "--dataset": dataset, "--predictions": preds, "--repos": given_repos,
            "--split": split if split != "test" else None, "--offline": offline}))


def records_table(records: list[dict], *, text_only: bool = False) -> Table:
    columns = ["instance", "status", "files", "~tokens"]
    if not text_only:
        columns += ["patch from", "applies", "cost $", "why"]
    table = Table(header_style="bold")
    for col in columns:
        table.add_column(col, justify="right" if col in ("files", "~tokens", "cost $") else "left",
                         overflow="fold", no_wrap=col != "why")
    for r in records:
        style = "green" if r.get("apply_check") in ("applied", "applied-after-repair") else "yellow"
        row = [r["instance_id"], r["status"], str(len(r.get("files") or [])), str(r.get("prompt_tokens_estimate", "-"))]
        if not text_only:
            row += [r.get("extraction", "-"), f"[{style}]{r.get('apply_check', '-')}[/]", f"{r.get('cost') or 0.0:.4f}",
                    escape(r.get("reason") or r.get("apply_reason") or "")]
        table.add_row(*row)
    return table
