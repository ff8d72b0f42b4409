"""Test lists from repeated runs: which tests the gold patch turns from failing to passing.

  FAIL_TO_PASS: fails (FAILED, ERROR or missing) in every before-run, PASSED in every after-run.
  PASS_TO_PASS: PASSED in every run.
  A test whose outcome changes between runs of the same side is flaky.
  A test PASSED in every before-run and failing in every after-run is broken by the gold.
  An id naming a file the test patch does not touch is in neither list (outside_test_files).
Pure functions over status maps; validation.py runs the tests and calls them.
"""

from __future__ import annotations

from collections.abc import Iterable

from issuebench.models import TestStatus, TestStatusMap

PASS, FAIL, OTHER = "pass", "fail", "other"


def outcome(status: TestStatus | None) -> str:
    if status is None or status in (TestStatus.FAILED, TestStatus.ERROR):
        return FAIL  # missing counts as failing: a test that cannot even be collected fails
    return PASS if status is TestStatus.PASSED else OTHER


def classify(before: list[TestStatusMap], after: list[TestStatusMap]) -> dict[str, list[str]]:
    """F2P / P2P / flaky / broken (P2F) test ids from repeated runs on each side."""
    names = sorted({name for run in (*before, *after) for name in run})
    result: dict[str, list[str]] = {"FAIL_TO_PASS": [], "PASS_TO_PASS": [], "flaky": [], "broken": []}
    for name in names:
        pre = {outcome(run.get(name)) for run in before}
        post = {outcome(run.get(name)) for run in after}
        if OTHER in pre or OTHER in post:
            continue  # skipped / xfail somewhere: says nothing about the fix
        if len(pre) > 1 or len(post) > 1:
            result["flaky"].append(name)
        elif post == {PASS}:
            result["FAIL_TO_PASS" if pre == {FAIL} else "PASS_TO_PASS"].append(name)
        elif pre == {PASS}:
            result["broken"].append(name)
    return result


OUTSIDE = "outside the test patch's files"


def outside_test_files(names: Iterable[str], test_files: Iterable[str]) -> set[str]:
    """Ids that name a file the test patch does not touch: the output of another session (a test
    that runs pytest inside prints its inner results), never a test of the run's own targets. The
    reference's lists hold only ids of the test patch's files (every `path::name` id of Lite's 323
    rows). Judged only when some id names a test file, i.e. when ids are paths from the root."""
    files = set(test_files)
    named = {n for n in names if "::" in n or n.endswith(".py")}
    if not any(n.split("::", 1)[0] in files for n in named):
        return set()
    return {n for n in named if n.split("::", 1)[0] not in files}


def scoped(runs: list[TestStatusMap], outside: set[str]) -> list[TestStatusMap]:
    return [{k: v for k, v in run.items() if k not in outside} for run in runs] if outside else runs


def outcomes_line(runs: list[TestStatusMap], name: str) -> str:
    return ",".join(s.value if (s := run.get(name)) is not None else "missing" for run in runs)


def explain_dropped(before: list[TestStatusMap], after: list[TestStatusMap]) -> dict[str, str]:
    """Why each test seen in some run is in neither list, as one line naming the outcomes."""
    lists = classify(before, after)
    listed = set(lists["FAIL_TO_PASS"]) | set(lists["PASS_TO_PASS"])
    flaky, broken = set(lists["flaky"]), set(lists["broken"])
    why: dict[str, str] = {}
    for name in sorted({name for run in (*before, *after) for name in run} - listed):
        pre = {outcome(run.get(name)) for run in before}
        post = {outcome(run.get(name)) for run in after}
        if OTHER in pre or OTHER in post:
            kind = "skipped or xfail"
        elif name in flaky:
            kind = "flaky across repeats"
        elif name in broken:
            kind = "gold breaks it"
        elif not any(name in run for run in after):
            kind = "failing, and only in the before-runs"  # e.g. a parser's alias from a failure header
        elif post == {FAIL} and pre == {FAIL}:
            kind = "fails before and after"
        else:
            kind = "fails after the gold"
        why[name] = f"{kind} (before: {outcomes_line(before, name)}; after: {outcomes_line(after, name)})"
    return why
