"""`issuebench agent`: the bash-only agent over a dataset; `issuebench agent show ID`: one trajectory."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from issuebench.cli.common import check_positive, console, err_console, friendly_errors
from issuebench.cli.executor_opts import executor_option, opened_executor, ray_address_option
from issuebench.cli.next_step import command, say_next
from issuebench.cli.options import instance_ids_option, option, resolve_workers, workers_option
from issuebench.cli.predict_common import route_warnings, select_tasks
from issuebench.cli.progress import item_progress
from issuebench.cli.tables import print_table
from issuebench.errors import InputError, IssuebenchError

ROLE_STYLE = {"system": "dim", "user": "cyan", "assistant": "green"}


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The bash-only agent: one shell command per turn, in the sandbox.",
                        invoke_without_command=True, no_args_is_help=False)
    group.callback(invoke_without_command=True)(agent_command)
    group.command("show")(show_command)
    app.add_typer(group, name="agent")


@friendly_errors
def agent_command(
    ctx: typer.Context,
    dataset: str = option("--dataset", None),
    output: Path = option("--output", None, after="Run folder: preds.jsonl and trajectories/ go here."),
    model: str = option("--model", None, after=", or replay:FILE."),
    base_url: str = option("--base-url"),
    step_limit: int = typer.Option(50, "--step-limit", help="Model calls per instance (0: no limit)."),
    cost_limit: float = typer.Option(3.0, "--cost-limit", help="Dollars per instance (0: no limit)."),
    total_cost_limit: float = typer.Option(0.0, "--total-cost-limit", help="Dollars for the run: no instance starts past it (0: no limit)."),
    wall_limit: float = typer.Option(None, "--wall-limit", help="Seconds per instance."),
    timeout: float = option("--command-timeout", keep=("--timeout",)),
    memory_mb: int = typer.Option(4096, "--memory-mb", help="Memory one command may use."),
    instance_ids: list[str] = instance_ids_option(),
    workers: int = workers_option("Instances"),
    repos: Path = option("--repos", None, keep=("--repos-dir",)),
    recipes: Path = option("--recipes"),
    split: str = option("--split"),
    prices: Path = option("--prices"),
    no_resume: bool = option("--no-resume", after=": run every instance again, even finished ones (their rows "
                             "in preds.jsonl are replaced)."),
    no_sandbox: bool = option("--no-sandbox"),
    offline: bool = option("--offline"),
    python_fallback: str = option("--python-fallback"),
    executor: str = executor_option(),
    ray_address: str = ray_address_option(),
) -> None:
    """Run the agent on each task; writes OUTPUT/preds.jsonl (for `eval`) and OUTPUT/trajectories/."""
    if ctx.invoked_subcommand is not None:
        return
    for name, value in (("--dataset", dataset), ("--output", output), ("--model", model)):
        if value is None:
            raise IssuebenchError(f"agent needs {name}", hint="issuebench agent --dataset D --output DIR --model M")
    from issuebench.agent import INFRA_STATUSES, MODEL_ENV, AgentConfig, run_agent
    from issuebench.harness import EvalOptions, build_context
    from issuebench.llm import DEFAULT_PRICES, make_model

    check_positive("--workers", workers, integer=True)
    workers = resolve_workers(workers)
    route_warnings()
    if executor != "local":  # workers do not share our working directory: paths they read are absolute
        output, repos, recipes, prices = (p.resolve() if p else p for p in (output, repos, recipes, prices))
    given_repos = repos  # the demo's are found by eval itself
    tasks, repos, demo = select_tasks(dataset, split, instance_ids, repos)
    llm = make_model(model, base_url=base_url, prices=prices or DEFAULT_PRICES)
    ectx = build_context(EvalOptions(output_dir=output, run_id="agent", timeout=timeout, memory_mb=memory_mb,
                                     repos_dir=repos, recipes_dir=recipes, no_sandbox=no_sandbox,
                                     allow_clone=not offline, python_fallback="nearest" if demo else python_fallback))
    config = AgentConfig(step_limit=step_limit, cost_limit=cost_limit, wall_limit=wall_limit, command_timeout=timeout)
    started = time.monotonic()
    # With ray, -w is instances in flight (default 1, as locally); the model's key and endpoint
    # reach the workers as forwarded variables, never inside a record.
    with opened_executor(executor, ray_address, workers, forward_env=MODEL_ENV) as pool, \
            item_progress(console, "agent", len(tasks)) as progress:
        def on_result(record: dict) -> None:
            progress.done(f"{record['instance_id']}: {record['exit_status']} ({record.get('steps', 0)} steps)")

        result = run_agent(tasks, llm, ectx, output, config=config, total_cost_limit=total_cost_limit,
                           workers=workers, resume=not no_resume, on_result=on_result, executor=pool)
    if result.trajectories:
        print_table(console, trajectories_table(result.trajectories))
    if result.skipped:
        console.print(f"{len(result.skipped)} instance(s) already done in {output} (resumed; --no-resume reruns them)")
    infra = [r for r in result.trajectories if r["exit_status"] in INFRA_STATUSES]
    console.print(f"{len(result.trajectories)} run in {time.monotonic() - started:.1f}s, "
                  f"${sum(r['cost'] for r in result.trajectories):.4f} spent "
                  f"(${result.spent:.4f} with earlier runs of this folder)")
    if infra:
        err_console.print(f"[yellow]{len(infra)} instance(s) stopped by the infrastructure, not by the task "
                          "(no prediction written): rerun the same command to retry them[/]")
    console.print(f"Predictions: {result.folder.preds_path}", highlight=False, soft_wrap=True)
    say_next(console, command("eval", options={
        "--dataset": dataset, "--predictions": result.folder.preds_path, "--repos": given_repos,
        "--recipes": recipes, "--split": split if split != "test" else None, "--offline": offline,
        "--no-sandbox": no_sandbox, "--python-fallback": python_fallback if python_fallback != "error" else None}))


def trajectories_table(records: list[dict]) -> Table:
    table = Table(header_style="bold")
    for col, justify in (("instance", "left"), ("exit", "left"), ("steps", "right"), ("cost $", "right"),
                         ("patch lines", "right"), ("why", "left")):
        table.add_column(col, justify=justify, overflow="fold",  # type: ignore[arg-type]
                         no_wrap=col in ("instance", "exit"))
    for r in records:
        lines = sum(1 for ln in r.get("patch", "").splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---"))
        style = "green" if r["exit_status"] == "submitted" else "yellow"
        table.add_row(r["instance_id"], f"[{style}]{r['exit_status']}[/]", str(r["steps"]), f"{r['cost']:.4f}",
                      str(lines), escape(r.get("reason", "")))
    return table


@friendly_errors
def show_command(
    instance_id: str = typer.Argument(..., help="The instance whose trajectory to show."),
    output: Path = option("--output", Path("."), after="The agent's run folder."),
    full: bool = typer.Option(False, "--full", help="Show the system prompt too."),
) -> None:
    """Print one instance's trajectory: every message, then the patch."""
    from issuebench.agent import RunFolder

    folder = RunFolder(output)
    traj = folder.read_trajectory(instance_id)
    if traj is None:
        raise InputError(folder.trajectory_path(instance_id), "no trajectory for this instance",
                         hint="pass the agent's run folder with --output")
    console.print(f"[bold]{traj['instance_id']}[/] — model {traj['model']}, exit [bold]{traj['exit_status']}[/] "
                  f"({escape(traj.get('reason', ''))}), {traj['steps']} step(s), ${traj['cost']:.4f}, {traj['duration']:.1f}s")
    for i, msg in enumerate(traj.get("messages", [])):
        if msg["role"] == "system" and not full:
            continue
        console.print(Panel(Text(msg["content"]), title=f"{i}. {msg['role']}", title_align="left",
                            border_style=ROLE_STYLE.get(msg["role"], "white"), highlight=False))
    console.print(Panel(Text(traj.get("patch") or "(no changes)"), title="patch (from git)", title_align="left"))
