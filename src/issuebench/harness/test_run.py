"""What running a task's tests produced, and how its output is read into a status map."""

from __future__ import annotations

from dataclasses import dataclass, field

from issuebench.errors import IssuebenchError
from issuebench.harness import guards
from issuebench.harness.runner_report import RunnerReport
from issuebench.harness.verdict import parser_name
from issuebench.models import EnvSpec, InstanceStatus, PatchStatus, Task, TestStatusMap
from issuebench.parsers import extract_test_output, get_parser, suite_ran
from issuebench.sandbox import RunStatus

SANDBOX_STATUS = {
    RunStatus.TIMEOUT: InstanceStatus.TIMEOUT,
    RunStatus.MEMORY_LIMIT: InstanceStatus.MEMORY_LIMIT,
    RunStatus.PROCESS_LIMIT: InstanceStatus.PROCESS_LIMIT,
    RunStatus.OUTPUT_LIMIT: InstanceStatus.OUTPUT_LIMIT,
    RunStatus.FILE_LIMIT: InstanceStatus.FILE_LIMIT,
    RunStatus.SANDBOX_FAILED: InstanceStatus.SANDBOX_FAILED,
}


@dataclass
class TestRun:
    """What running a task's tests produced, before grading."""

    __test__ = False  # not a pytest test class

    status: InstanceStatus
    reason: str = ""
    status_map: TestStatusMap = field(default_factory=dict)
    returncode: int | None = None
    output: str = ""
    test_output: str | None = None
    patch_status: PatchStatus | None = None
    apply_method: str | None = None
    env_hash: str | None = None
    python: str | None = None
    exclude_newer: str | None = None
    command: str = ""
    script: str = ""
    notes: list[str] = field(default_factory=list)
    durations: dict[str, float] = field(default_factory=dict)
    env_manifest: dict | None = None
    runner_report: RunnerReport = field(default_factory=RunnerReport)


def parse_run(task: Task, spec: EnvSpec, run: TestRun, nonce: str, returncode: int | None) -> TestRun:
    """`run` with its status map read from its output (status UNRESOLVED until graded), or the reason
    there is none (LOG_UNPARSEABLE)."""
    run.test_output = extract_test_output(run.output, nonce=nonce)
    if run.test_output is not None:
        run.test_output = guards.cut_after_runner_summary(run.test_output)
    if run.test_output is None:
        run.status, run.reason = InstanceStatus.LOG_UNPARSEABLE, "test output markers missing"
        return run
    run.status_map = get_parser(parser_name(task, spec), task=task)(run.test_output)
    # Parsers of fail_only rows record failures only: a clean run that shows the suite ran is graded.
    clean_fail_only = task.eval_type == "fail_only" and suite_ran(run.test_output)
    if not run.status_map and not clean_fail_only:
        run.status = InstanceStatus.LOG_UNPARSEABLE
        run.reason = f"no test results found in the output (exit code {returncode}): {tail(run.test_output)}"
        return run
    run.status = InstanceStatus.UNRESOLVED  # graded by the caller
    return run


def explain(exc: IssuebenchError) -> str:
    """An error's message with its hint, as one line for a report's reason."""
    return f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message


def tail(text: str, lines: int = 6) -> str:
    return " | ".join(line.strip() for line in (text or "").strip().splitlines()[-lines:])
