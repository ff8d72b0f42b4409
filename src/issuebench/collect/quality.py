"""Why a kept task may fall short of a Verified-style task, said on the row itself.

validate keeps every task whose gold patch turns tests from failing to passing. Some such tasks are
weak all the same, in ways the runs show: nothing guards against a fix that breaks the rest (no
PASS_TO_PASS, because every test file is new), the failing tests fail only because the test module
cannot import the name the fix adds (any stub makes them pass collection), or the statement is one
line (a pull request's title). Each kept row carries these as `quality_flags` (empty: none found).
"""

from __future__ import annotations

from issuebench.models import Task, TestStatus, TestStatusMap
from issuebench.patch import parse_patch

NEW_TEST_FILES = "no PASS_TO_PASS: every test file of the test patch is new"
IMPORT_ONLY = "FAIL_TO_PASS fail only to import before the fix (not collected in any before-run)"
ONE_LINE = "one-line problem statement"


def quality_flags(task: Task, before: list[TestStatusMap]) -> list[str]:
    """The weaknesses of a kept task, each a fixed phrase (an empty list when none)."""
    flags = []
    if not task.PASS_TO_PASS and all(fp.is_new for fp in parse_patch(task.test_patch)):
        flags.append(NEW_TEST_FILES)
    if task.FAIL_TO_PASS and all(_not_collected(name, before) for name in task.FAIL_TO_PASS):
        flags.append(IMPORT_ONLY)
    if len([line for line in (task.problem_statement or "").splitlines() if line.strip()]) <= 1:
        flags.append(ONE_LINE)
    return flags


def _not_collected(name: str, before: list[TestStatusMap]) -> bool:
    """Absent from every before-run, or only its module's collection error is there."""
    module = name.split("::", 1)[0]
    return all(run.get(name) is None and run.get(module) in (None, TestStatus.ERROR) for run in before)
