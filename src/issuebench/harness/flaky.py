"""A run that fixes the issue and fails only tests that passed before is run once more.

Real suites have tests that fail now and then whatever the patch: a browser test that draws an
image before it has decoded, a timer that runs out on a loaded machine. Graded once, such a test
makes a correct fix read as a regression. So when a run passes every FAIL_TO_PASS test and fails
only PASS_TO_PASS tests, the whole test run is repeated in a fresh workspace (runners cannot all
select single tests), up to `reruns` times, until a run resolves. The best run gives the verdict
(resolved, else `needs_network` when only the tests the recipe names as fetching from the internet
still fail, else the first run's), and the tests that failed before it are named as flaky in the
notes. A run where only such internet tests fail is not repeated: no repeat heals those.

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
    """Whether the report's tests ran, every FAIL_TO_PASS test passed and some PASS_TO_PASS failed,
    not only tests the recipe names as needing the internet (`needs_network`: no repeat heals those)."""
    if report.status is not InstanceStatus.UNRESOLVED:
        return False
    status = report.tests_status
    return status is not None and not status.FAIL_TO_PASS.failure and bool(status.PASS_TO_PASS.failure)


def with_reruns(first: Attempt, attempt: Callable[[], Attempt], reruns: int,
                log: InstanceLog) -> tuple[Attempt, dict[int, TestRun]]:
    """The attempt whose verdict stands, and the other runs by their number from 1 (their logs are
    kept too)."""
    tried: list[Attempt] = [first]
    while len(tried) <= reruns and only_pass_to_pass_fail(tried[-1][1]):
        failing = tried[-1][1].tests_status.PASS_TO_PASS.failure
        log.info(f"only PASS_TO_PASS tests failed ({len(failing)}): running the tests again "
                 f"({len(tried)} of {reruns} rerun(s))")
        tried.append(attempt())
    # Resolved beats needs_network (only internet tests still fail) beats the rest; the first on a tie.
    chosen = max(range(len(tried)), key=lambda i: (_RANK.get(tried[i][1].status, 0), -i))
    others = {i + 1: run for i, (run, _) in enumerate(tried) if i != chosen}
    run, report = tried[chosen]
    if chosen == 0:
        return (run, report), others
    still = set(report.tests_status.PASS_TO_PASS.failure)
    flaky = sorted({test for _, earlier in tried[:chosen] for test in earlier.tests_status.PASS_TO_PASS.failure}
                   - still)
    note = (f"flaky: {len(flaky)} PASS_TO_PASS test(s) failed in an earlier run of this patch and passed "
            f"when run again: " + ", ".join(flaky[:10]) + (" ..." if len(flaky) > 10 else ""))
    log.info(note)
    return (run, report.model_copy(update={"notes": [*report.notes, note]})), others


_RANK = {InstanceStatus.RESOLVED: 2, InstanceStatus.NEEDS_NETWORK: 1}
