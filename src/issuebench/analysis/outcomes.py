"""The SWE-bench paper's outcome categories (Appendix C.5) for an applied patch.

A patch that applied and ran is placed by two questions: how many FAIL_TO_PASS tests now pass
(all, some, none) and whether every PASS_TO_PASS test still passes.

                      all F2P pass        some F2P pass         no F2P passes
  all P2P pass        Resolved            Partially Resolved    No-Op
  some P2P fail       Breaking Resolved   Work in Progress      Regression

An empty FAIL_TO_PASS list counts as "all pass" (nothing was asked that failed), which keeps the
category consistent with the resolved verdict of the grading rule.
"""

from __future__ import annotations

from issuebench.grading import outcome_of
from issuebench.models import Outcome, TestsStatus

_TABLE = {
    ("all", True): Outcome.RESOLVED,
    ("some", True): Outcome.PARTIALLY_RESOLVED,
    ("none", True): Outcome.NO_OP,
    ("all", False): Outcome.BREAKING_RESOLVED,
    ("some", False): Outcome.WORK_IN_PROGRESS,
    ("none", False): Outcome.REGRESSION,
}


def outcome_from_counts(f2p_success: int, f2p_failure: int, p2p_failure: int) -> Outcome:
    if f2p_failure == 0:
        f2p = "all"
    elif f2p_success == 0:
        f2p = "none"
    else:
        f2p = "some"
    return _TABLE[(f2p, p2p_failure == 0)]


def outcome_from_tests_status(tests_status: TestsStatus) -> Outcome:
    """The grading module's own rule (grading.outcome_of), so the two can never disagree."""
    return outcome_of(tests_status)


OUTCOME_ORDER = [o.value for o in Outcome]
