"""How eval results look on the terminal: a progress bar while running, a table at the end."""

from __future__ import annotations

from collections import Counter

from rich.table import Table

from issuebench.cli.tables import print_table
from issuebench.harness import EvaluationResult
from issuebench.models import InstanceReport, InstanceStatus

STATUS_STYLE = {
    InstanceStatus.RESOLVED: "bold green",
    InstanceStatus.UNRESOLVED: "yellow",
    InstanceStatus.EMPTY: "dim",
}

# What each status means, in words a newcomer understands.
STATUS_MEANING = {
    InstanceStatus.RESOLVED: "the patch fixes the issue: every FAIL_TO_PASS and PASS_TO_PASS test passes",
    InstanceStatus.UNRESOLVED: "the patch applied and the tests ran, but some required test fails",
    InstanceStatus.EMPTY: "no patch was submitted, so nothing was run",
    InstanceStatus.INVALID_PATCH: "the prediction is not a unified diff",
    InstanceStatus.APPLY_FAILED: "the diff does not apply to the repository at the base commit",
    InstanceStatus.TEST_PATCH_FAILED: "the task's own test patch does not apply (a fault of the task)",
    InstanceStatus.TIMEOUT: "the tests ran past the time limit and were killed",
    InstanceStatus.MEMORY_LIMIT: "the tests used more memory than allowed",
    InstanceStatus.PROCESS_LIMIT: "the tests started more processes than allowed",
    InstanceStatus.OUTPUT_LIMIT: "the tests printed more than allowed",
    InstanceStatus.FILE_LIMIT: "the tests wrote a file larger than allowed",
    InstanceStatus.LOG_UNPARSEABLE: "the test output holds no results we could read",
    InstanceStatus.ENV_FAILED: "the environment could not be built",
    InstanceStatus.SANDBOX_FAILED: "the sandbox could not start",
    InstanceStatus.NEEDS_NETWORK: "the task's tests need the internet",
    InstanceStatus.NEEDS_REGISTRY: "the environment needs a package registry this machine cannot reach",
    InstanceStatus.WORKER_LOST: "the worker running it died (after retries); a rerun retries it",
    InstanceStatus.ERROR: "the harness hit an error",
}


def status_text(status: InstanceStatus) -> str:
    style = STATUS_STYLE.get(status, "red")
    return f"[{style}]{status.value}[/]"


def results_table(reports: list[InstanceReport], *, expected: dict[str, str] | None = None,
                  title: str | None = None) -> Table:
    table = Table(title=title, show_lines=False, header_style="bold")
    table.add_column("instance")
    table.add_column("status")
    table.add_column("outcome")
    table.add_column("F2P", justify="right")
    table.add_column("P2P", justify="right")
    if expected is not None:
        table.add_column("expected")
    table.add_column("why", overflow="fold", max_width=60)
    for r in reports:
        f2p = p2p = "-"
        if r.tests_status is not None:
            ts = r.tests_status
            f2p = f"{len(ts.FAIL_TO_PASS.success)}/{len(ts.FAIL_TO_PASS.success) + len(ts.FAIL_TO_PASS.failure)}"
            p2p = f"{len(ts.PASS_TO_PASS.success)}/{len(ts.PASS_TO_PASS.success) + len(ts.PASS_TO_PASS.failure)}"
        row = [r.instance_id, status_text(r.status), r.outcome.value if r.outcome else "-", f2p, p2p]
        if expected is not None:
            want = expected.get(r.instance_id, "?")
            mark = "[green]✓[/]" if want == r.status.value else "[red]✗[/]"
            row.append(f"{mark} {want}")
        row.append(r.reason)
        table.add_row(*row)
    return table


def summary_line(reports: list[InstanceReport]) -> str:
    counts = Counter(r.status for r in reports)
    resolved = counts.get(InstanceStatus.RESOLVED, 0)
    parts = [f"{resolved}/{len(reports)} resolved"]
    parts += [f"{n} {s.value}" for s, n in counts.most_common() if s is not InstanceStatus.RESOLVED]
    return ", ".join(parts)


def print_result(console, result: EvaluationResult) -> None:
    for model in result.models:
        print_table(console, results_table(model.reports, title=f"{model.model} — run {result.run_id}"))
        console.print(f"[bold]{model.model}[/]: {summary_line(model.reports)}")
        console.print(f"summary: {model.summary_path}")
