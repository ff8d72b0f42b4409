"""A run that fixes the issue and fails only tests that passed before is run once more.

Real suites have tests that fail now and then whatever the patch: a browser test that draws an
image before it has decoded, a timer that runs out on a loaded machine. Graded once, such a test
makes a correct fix read as a regression. So when a run passes every FAIL_TO_PASS test and fails
only PASS_TO_PASS tests, the whole test run is repeated in a fresh workspace (runners cannot all
select single tests), up to `reruns` times. The first repeat that resolves gives the verdict, and
the tests that failed before it are named as flaky in the notes; when none resolves, the first
run's verdict stands.

Why this cannot make a non-fix resolved: a run that fails a FAIL_TO_PASS test is never repeated
(a fix must pass those the first time), and the repeat is graded by the same code as the first
run, runner report and all; a patch that breaks a test only some of the time made it pass in a
whole run. `--flaky-reruns 0` grades every run once, as the reference harness does.
"""

from __future__ import annotations

from collections.abc import Callable

from issuebench.harness.runlog import InstanceLog
from issuebench.harness.test_run import TestRun
from issuebench.models import InstanceReport, InstanceStatus

Attempt = tuple[TestRun, InstanceReport]


def only_pass_to_pass_fail(report: InstanceReport) -> bool:
    """Whether the report's tests ran, every FAIL_TO_PASS test passed and some PASS_TO_PASS failed."""
    if report.status not in (InstanceStatus.UNRESOLVED, InstanceStatus.NEEDS_NETWORK) or report.resolved:
        return False
    status = report.tests_status
    return status is not None and not status.FAIL_TO_PASS.failure and bool(status.PASS_TO_PASS.failure)


def with_reruns(first: Attempt, attempt: Callable[[], Attempt], reruns: int,
                log: InstanceLog) -> tuple[Attempt, list[TestRun]]:
    """The attempt whose verdict stands, and the runs before it (their logs are kept too)."""
    tried: list[Attempt] = [first]
    while len(tried) <= reruns and only_pass_to_pass_fail(tried[-1][1]):
        failing = tried[-1][1].tests_status.PASS_TO_PASS.failure
        log.info(f"only PASS_TO_PASS tests failed ({len(failing)}): running the tests again "
                 f"({len(tried)} of {reruns} rerun(s))")
        tried.append(attempt())
    last_run, last = tried[-1]
    if len(tried) == 1 or not last.resolved:
        return first, [run for run, _ in tried[1:]]
    flaky = sorted({test for _, report in tried[:-1] for test in report.tests_status.PASS_TO_PASS.failure})
    note = (f"flaky: {len(flaky)} PASS_TO_PASS test(s) failed in an earlier run of this patch and passed "
            f"when run again: " + ", ".join(flaky[:10]) + (" ..." if len(flaky) > 10 else ""))
    log.info(note)
    last = last.model_copy(update={"notes": [*last.notes, note]})
    return (last_run, last), [run for run, _ in tried[:-1]]
