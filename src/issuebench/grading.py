"""Status map + test lists -> `Grade`: the reference's rule, the paper's outcome categories, and
a strict mode for the reference's known holes.

Rules (`rule=`), so logs graded by any version of the reference can be re-graded identically:

- "current" (default; the reference from swebench 5): a FAIL_TO_PASS test succeeds when PASSED
  or XFAIL and fails otherwise (FAILED, ERROR, SKIPPED, missing). A PASS_TO_PASS test succeeds
  when PASSED, XFAIL or SKIPPED and fails when FAILED, ERROR or missing. An expected id that the
  dataset stores truncated inside its parametrization (`test_x[log(photon`: more `[` than `]`)
  matches the log's ids that start with it, when those all agree on pass versus fail.
- "swebench-4" (swebench 3.x-4.x): success is PASSED or XFAIL; failure is FAILED, ERROR or
  missing; a SKIPPED test lands in neither list (so a patch that skips every FAIL_TO_PASS test
  is resolved); no prefix matching.
- "swebench-2" (swebench 2.x, the harness of mid-2024 runs): as "swebench-4" but only PASSED is
  a success; XFAIL and SKIPPED tests land in neither list.

`eval_type="fail_only"` (every rule): only an explicit FAILED fails; anything else, including a
missing test, succeeds. One hole closed: a failure the log reports under a shorter suite path
than the graded id (mocha files a failing "before each" hook under the suite that defines it,
`Error Helpers:"before each" hook for "basic"`, where the row has it under the test's own suite,
`Error Helpers:friendly error logger:...`) fails that id too; looked up exactly it was missing,
so passing, and a patch that fixes nothing was resolved (p5.js-4561).

Resolution (the reference's): with f2p = success / (success + failure) of FAIL_TO_PASS (1 when
both are empty) and p2p likewise, "full" when f2p == 1 and p2p == 1, "partial" when
0 < f2p < 1 and p2p == 1, else "no". `resolved` is "full".

Outcome (SWE-bench paper, Appendix C.5, Table 22), for a patch that applied:
    F2P all pass  & P2P all pass   -> Resolved
    F2P all pass  & some P2P fail  -> Breaking Resolved
    F2P some pass & P2P all pass   -> Partially Resolved
    F2P some pass & some P2P fail  -> Work in Progress
    F2P none pass & P2P all pass   -> No-Op
    F2P none pass & some P2P fail  -> Regression
"all" uses the same ratios as the resolution, so an empty list counts as all passing.

A log that does not describe the run is never resolved, in every mode (`untrusted`): a test
command that exited non-zero while the log shows no FAILED or ERROR test at all (as the reference's
5.x harness rules), and any disagreement the caller found between the log and the runner's own
report (issuebench.harness.runner_report). A non-zero exit with failing tests outside the graded
lists is the runner reporting those failures, and stands.

Strict mode (`strict=True`) closes holes a patch can exploit: a FAIL_TO_PASS test that is XFAIL
or SKIPPED fails (a patch can mark the test xfail or skip it). Any strict flag or untrusted
reason withholds `resolved`; the lists and the outcome still describe what the log says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Literal

from issuebench.models import Grade, ListResult, Outcome, TestsStatus, TestStatus

GradingRule = Literal["current", "swebench-4", "swebench-2"]
GRADING_RULES: tuple[str, ...] = ("current", "swebench-4", "swebench-2")

_PASSING = {TestStatus.PASSED, TestStatus.XFAIL}

# Which statuses count as success and failure, per rule and per list kind. A status in neither
# set lands in neither list (the older rules' behaviour for SKIPPED and XFAIL).
_SUCCESS: dict[tuple[str, str], frozenset[TestStatus]] = {
    ("current", "f2p"): frozenset({TestStatus.PASSED, TestStatus.XFAIL}),
    ("current", "p2p"): frozenset({TestStatus.PASSED, TestStatus.XFAIL, TestStatus.SKIPPED}),
    ("swebench-4", "f2p"): frozenset({TestStatus.PASSED, TestStatus.XFAIL}),
    ("swebench-4", "p2p"): frozenset({TestStatus.PASSED, TestStatus.XFAIL}),
    ("swebench-2", "f2p"): frozenset({TestStatus.PASSED}),
    ("swebench-2", "p2p"): frozenset({TestStatus.PASSED}),
}
_FAILURE: dict[tuple[str, str], frozenset[TestStatus]] = {
    ("current", "f2p"): frozenset({TestStatus.FAILED, TestStatus.ERROR, TestStatus.SKIPPED}),
    ("current", "p2p"): frozenset({TestStatus.FAILED, TestStatus.ERROR}),
    ("swebench-4", "f2p"): frozenset({TestStatus.FAILED, TestStatus.ERROR}),
    ("swebench-4", "p2p"): frozenset({TestStatus.FAILED, TestStatus.ERROR}),
    ("swebench-2", "f2p"): frozenset({TestStatus.FAILED, TestStatus.ERROR}),
    ("swebench-2", "p2p"): frozenset({TestStatus.FAILED, TestStatus.ERROR}),
}

FLAG_NONZERO_EXIT = "nonzero_exit_without_failing_test"
FLAG_F2P_XFAIL = "fail_to_pass_xfail"
FLAG_F2P_SKIPPED = "fail_to_pass_skipped"


def _as_status(value: object) -> TestStatus | None:
    try:
        return TestStatus(value)
    except ValueError:
        return None


# pytest 7 and later tell duplicate parametrize ids that end in a digit apart with `_N`
# (`1234-1234_0`); earlier ones append N alone (`1234-12340`). A row's lists keep the form of
# the reference's pytest; an environment dated to the task may hold the earlier one.
_DUPLICATE_ID_SUFFIX = re.compile(r"^(.*\d)_(\d+)\]$")


def lookup_status(test_id: str, status_map: Mapping[str, TestStatus], *,
                  prefix_match: bool = True) -> TestStatus | None:
    """The status of `test_id`, tolerating ids the dataset stores cut inside `[...]`, and a
    duplicate parametrize id in the later pytest's form (`_N`) where the log has the earlier one.
    `prefix_match=False` (the reference's older rules) looks ids up exactly.

    Only an id with more `[` than `]` is prefix-matched (free-form names never are), and only
    when every log id it prefixes agrees on pass versus fail; otherwise it is missing.
    """
    if test_id in status_map:
        return _as_status(status_map[test_id])
    if not prefix_match:
        return None
    if (older := _DUPLICATE_ID_SUFFIX.sub(r"\1\2]", test_id)) != test_id and older in status_map:
        return _as_status(status_map[older])
    if test_id.count("[") <= test_id.count("]"):
        return None
    matches = [_as_status(status) for key, status in status_map.items() if key.startswith(test_id)]
    if matches and len({status in _PASSING for status in matches}) == 1:
        return matches[0]
    return None


def grade_list(tests: Iterable[str], status_map: Mapping[str, TestStatus], *, kind: str,
               rule: GradingRule = "current", eval_type: str | None = None,
               strict: bool = False) -> ListResult:
    """Split one expected list into success and failure (`kind` is "f2p" or "p2p")."""
    result = ListResult()
    fail_only = eval_type == "fail_only"
    success = set(_SUCCESS[(rule, kind)])
    failure = set(_FAILURE[(rule, kind)])
    if strict and kind == "f2p":
        success -= {TestStatus.XFAIL, TestStatus.SKIPPED}
        failure |= {TestStatus.XFAIL, TestStatus.SKIPPED}
    failing = [key.split(":") for key, status in status_map.items()
               if _as_status(status) is TestStatus.FAILED] if fail_only else []
    for test_id in tests:
        if fail_only:
            # The reference looks fail_only ids up exactly: only an explicit FAILED fails.
            failed = _as_status(status_map.get(test_id)) is TestStatus.FAILED or \
                any(_same_test_shorter_path(parts, test_id.split(":")) for parts in failing)
            (result.failure if failed else result.success).append(test_id)
            continue
        status = lookup_status(test_id, status_map, prefix_match=rule == "current")
        if status is None:
            result.failure.append(test_id)
        elif status in success:
            result.success.append(test_id)
        elif status in failure:
            result.failure.append(test_id)
    return result


def _same_test_shorter_path(failed: list[str], graded: list[str]) -> bool:
    """Is `failed` the graded test's title under fewer of its suites (in their order)?"""
    if len(failed) >= len(graded) or len(failed) < 2 or failed[-1] != graded[-1]:
        return False
    suites = iter(graded[:-1])
    return all(any(suite == wanted for suite in suites) for wanted in failed[:-1])


def pass_ratio(result: ListResult) -> float:
    """success / (success + failure); 1 for an empty list, as in the reference."""
    total = len(result.success) + len(result.failure)
    return 1.0 if total == 0 else len(result.success) / total


def resolution_of(tests_status: TestsStatus) -> Literal["full", "partial", "no"]:
    f2p = pass_ratio(tests_status.FAIL_TO_PASS)
    p2p = pass_ratio(tests_status.PASS_TO_PASS)
    if f2p == 1 and p2p == 1:
        return "full"
    if 0 < f2p < 1 and p2p == 1:
        return "partial"
    return "no"


def outcome_of(tests_status: TestsStatus) -> Outcome:
    """The paper's category (Appendix C.5) from the FAIL_TO_PASS and PASS_TO_PASS results."""
    f2p = pass_ratio(tests_status.FAIL_TO_PASS)
    p2p_all = pass_ratio(tests_status.PASS_TO_PASS) == 1
    if f2p == 1:
        return Outcome.RESOLVED if p2p_all else Outcome.BREAKING_RESOLVED
    if f2p > 0:
        return Outcome.PARTIALLY_RESOLVED if p2p_all else Outcome.WORK_IN_PROGRESS
    return Outcome.NO_OP if p2p_all else Outcome.REGRESSION


def strict_flags_of(status_map: Mapping[str, TestStatus], fail_to_pass: Iterable[str]) -> list[str]:
    flags: list[str] = []
    f2p_statuses = {lookup_status(test_id, status_map) for test_id in fail_to_pass}
    if TestStatus.XFAIL in f2p_statuses:
        flags.append(FLAG_F2P_XFAIL)
    if TestStatus.SKIPPED in f2p_statuses:
        flags.append(FLAG_F2P_SKIPPED)
    return flags


def exit_code_unexplained(status_map: Mapping[str, TestStatus], returncode: int | None) -> bool:
    """A non-zero exit that no FAILED or ERROR test in the log accounts for."""
    statuses = {_as_status(status) for status in status_map.values()}
    return returncode not in (None, 0) and not statuses & {TestStatus.FAILED, TestStatus.ERROR}


def grade(status_map: Mapping[str, TestStatus], fail_to_pass: Iterable[str],
          pass_to_pass: Iterable[str], *, eval_type: str | None = None, strict: bool = False,
          returncode: int | None = None, rule: GradingRule = "current",
          fail_to_fail: Iterable[str] = (), pass_to_fail: Iterable[str] = (),
          disagreements: Iterable[str] = ()) -> Grade:
    """Grade one applied patch's test results against the task's expected lists.

    `returncode` is the test command's exit status when known; `disagreements` are graded tests
    the runner's own report contradicts (each withholds `resolved`).
    FAIL_TO_FAIL and PASS_TO_FAIL are graded like FAIL_TO_PASS when a dataset has them; they
    never affect the verdict.
    """
    if rule not in GRADING_RULES:
        raise ValueError(f"unknown grading rule {rule!r}; use one of {', '.join(GRADING_RULES)}")
    fail_to_pass = list(fail_to_pass)
    common = {"rule": rule, "eval_type": eval_type}
    tests_status = TestsStatus(
        FAIL_TO_PASS=grade_list(fail_to_pass, status_map, kind="f2p", strict=strict, **common),
        PASS_TO_PASS=grade_list(pass_to_pass, status_map, kind="p2p", **common),
        FAIL_TO_FAIL=grade_list(fail_to_fail, status_map, kind="f2p", **common),
        PASS_TO_FAIL=grade_list(pass_to_fail, status_map, kind="f2p", **common),
    )
    flags = strict_flags_of(status_map, fail_to_pass) if strict else []
    untrusted = [f"the runner's own report disagrees: {d}" for d in disagreements]
    if exit_code_unexplained(status_map, returncode):
        untrusted.insert(0, f"{FLAG_NONZERO_EXIT}: the test command exited {returncode} and the log "
                            "shows no failing test")
    resolution = resolution_of(tests_status)
    if flags or untrusted:
        resolution = "no"
    return Grade(
        tests_status=tests_status,
        resolved=resolution == "full",
        resolution=resolution,
        outcome=outcome_of(tests_status),
        strict_flags=flags,
        untrusted=untrusted,
    )


def explain_grade(result: Grade, status_map: Mapping[str, TestStatus] | None = None) -> str:
    """The verdict in one line a person can act on, e.g. "1 of 3 FAIL_TO_PASS tests fail". With the
    status map, failures the log never reports are counted apart: a run that never ran them (a
    narrower test command than the lists were made with) reads differently from one that failed them."""
    if result.resolved:
        return "all FAIL_TO_PASS and PASS_TO_PASS tests pass"
    parts = []
    for name, lst in (("FAIL_TO_PASS", result.tests_status.FAIL_TO_PASS),
                      ("PASS_TO_PASS", result.tests_status.PASS_TO_PASS)):
        if lst.failure:
            line = f"{len(lst.failure)} of {len(lst.failure) + len(lst.success)} {name} tests fail"
            absent = [t for t in lst.failure if status_map is not None and lookup_status(t, status_map) is None]
            if absent:
                line += f" ({len(absent)} of them absent from the log: the run never reported them)"
            parts.append(line)
    parts.extend(f"strict: {flag}" for flag in result.strict_flags)
    if result.untrusted:
        parts.append("the log does not describe the run: " + "; ".join(result.untrusted[:2]))
    return "; ".join(parts) or "not resolved"
