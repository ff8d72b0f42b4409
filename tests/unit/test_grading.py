"""Grading: the reference's rule in each of its versions, outcomes, strict mode."""

from __future__ import annotations

import pytest

from issuebench.grading import (
    FLAG_F2P_SKIPPED,
    FLAG_F2P_XFAIL,
    FLAG_NONZERO_EXIT,
    explain_grade,
    grade,
    lookup_status,
)
from issuebench.models import Outcome, TestStatus

P, F, E, S, X = (TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR, TestStatus.SKIPPED,
                 TestStatus.XFAIL)


def test_all_pass_is_resolved_full() -> None:
    result = grade({"a": P, "b": P, "c": X}, ["a", "c"], ["b"])
    assert result.resolved and result.resolution == "full"
    assert result.outcome is Outcome.RESOLVED
    assert result.tests_status.FAIL_TO_PASS.success == ["a", "c"]


def test_current_rule_f2p_skipped_or_missing_fails_p2p_skipped_succeeds() -> None:
    result = grade({"f1": P, "f2": S, "p1": S, "p2": X}, ["f1", "f2", "f3"], ["p1", "p2", "p3"])
    assert result.tests_status.FAIL_TO_PASS.failure == ["f2", "f3"]
    assert result.tests_status.PASS_TO_PASS.success == ["p1", "p2"]
    assert result.tests_status.PASS_TO_PASS.failure == ["p3"]
    assert not result.resolved


def test_swebench4_rule_drops_skipped_tests_from_both_lists() -> None:
    # The old hole: every FAIL_TO_PASS test skipped -> resolved.
    result = grade({"f": S, "p": P}, ["f"], ["p"], rule="swebench-4")
    assert result.tests_status.FAIL_TO_PASS.success == []
    assert result.tests_status.FAIL_TO_PASS.failure == []
    assert result.resolved
    assert not grade({"f": S, "p": P}, ["f"], ["p"]).resolved


def test_swebench2_rule_counts_only_passed() -> None:
    result = grade({"f": X, "p": P}, ["f"], ["p"], rule="swebench-2")
    assert result.tests_status.FAIL_TO_PASS.model_dump() == {"success": [], "failure": []}
    assert grade({"f": X, "p": P}, ["f"], ["p"], rule="swebench-4").tests_status.FAIL_TO_PASS.success == ["f"]


def test_partial_resolution() -> None:
    result = grade({"f1": P, "f2": F, "p": P}, ["f1", "f2"], ["p"])
    assert result.resolution == "partial" and not result.resolved
    assert result.outcome is Outcome.PARTIALLY_RESOLVED


@pytest.mark.parametrize(("status_map", "outcome"), [
    ({"f1": P, "f2": P, "p": P}, Outcome.RESOLVED),
    ({"f1": P, "f2": P, "p": F}, Outcome.BREAKING_RESOLVED),
    ({"f1": P, "f2": F, "p": P}, Outcome.PARTIALLY_RESOLVED),
    ({"f1": P, "f2": F, "p": E}, Outcome.WORK_IN_PROGRESS),
    ({"f1": F, "f2": F, "p": P}, Outcome.NO_OP),
    ({"f1": F, "f2": E}, Outcome.REGRESSION),
])
def test_outcome_categories_of_the_paper(status_map, outcome) -> None:
    assert grade(status_map, ["f1", "f2"], ["p"]).outcome is outcome


def test_empty_lists_count_as_all_passing() -> None:
    result = grade({}, [], [])
    assert result.resolved and result.outcome is Outcome.RESOLVED


def test_fail_only_only_explicit_failed_fails() -> None:
    result = grade({"f1": E, "f2": F}, ["f1", "f2", "f3"], ["p"], eval_type="fail_only")
    assert result.tests_status.FAIL_TO_PASS.failure == ["f2"]
    assert result.tests_status.FAIL_TO_PASS.success == ["f1", "f3"]
    assert result.tests_status.PASS_TO_PASS.success == ["p"]


def test_fail_only_a_failure_reported_under_fewer_suites_fails_the_graded_id() -> None:
    # p5.js-4561 with a patch that fixes nothing: mocha filed the failing hook under the suite that
    # defines it; the row names it under the test's own suite. Looked up exactly, it passed.
    hook = 'Error Helpers:friendly error logger:"before each" hook for "basic"'
    log = {'Error Helpers:"before each" hook for "basic"': F}
    result = grade(log, [hook], ["Core:registers"], eval_type="fail_only")
    assert result.tests_status.FAIL_TO_PASS.failure == [hook] and not result.resolved
    # Only the same title under a subsequence of the same suites: other tests are untouched.
    others = grade({'Core:"before each" hook for "basic"': F, "basic": F},
                   [hook, 'Error Helpers:other:"before each" hook for "basic"'], [], eval_type="fail_only")
    assert others.tests_status.FAIL_TO_PASS.failure == [] and others.resolved


def test_truncated_parametrized_ids_match_by_prefix_when_unambiguous() -> None:
    log = {"t.py::test_g[log(photon cm)]": P, "t.py::test_h[a-1]": P, "t.py::test_h[a-2]": F}
    assert lookup_status("t.py::test_g[log(photon", log) is P
    assert lookup_status("t.py::test_h[a", log) is None  # candidates disagree
    assert lookup_status("t.py::test_g", log) is None    # balanced brackets: exact only
    assert grade(log, ["t.py::test_g[log(photon"], []).resolved
    assert not grade(log, ["t.py::test_g[log(photon"], [], rule="swebench-4").resolved


def test_a_duplicate_parametrize_id_in_the_later_pytest_form_finds_the_earlier_form() -> None:
    """sphinx-7462's lists name `test_unparse[1234-1234_0]` (pytest 7+); its dated environment's
    pytest 6 prints `test_unparse[1234-12340]`."""
    log = {"t.py::test_unparse[1234-12340]": P, "t.py::test_unparse[1234-12341]": F}
    assert lookup_status("t.py::test_unparse[1234-1234_0]", log) is P
    assert lookup_status("t.py::test_unparse[1234-1234_1]", log) is F
    assert lookup_status("t.py::test_unparse[a_0]", {"t.py::test_unparse[a0]": P}) is None  # no digit before `_`
    assert lookup_status("t.py::test_unparse[1234-1234_0]", log, prefix_match=False) is None  # the reference's exact rule


def test_strict_mode_counts_xfail_and_skip_as_f2p_failures() -> None:
    status_map = {"f1": X, "f2": S, "p": S}
    lenient = grade(status_map, ["f1"], ["p"])
    assert lenient.resolved
    strict = grade(status_map, ["f1", "f2"], ["p"], strict=True)
    assert not strict.resolved
    assert strict.tests_status.FAIL_TO_PASS.failure == ["f1", "f2"]
    assert strict.tests_status.PASS_TO_PASS.success == ["p"]
    assert FLAG_F2P_XFAIL in strict.strict_flags and FLAG_F2P_SKIPPED in strict.strict_flags


def test_a_nonzero_exit_the_log_does_not_explain_is_never_resolved() -> None:
    # Printed PASSED lines and a real failure underneath: the exit status gives the run away.
    status_map = {"f": P, "p": P}
    for strict in (False, True):
        flagged = grade(status_map, ["f"], ["p"], strict=strict, returncode=1)
        assert not flagged.resolved and flagged.resolution == "no"
        assert flagged.untrusted and flagged.untrusted[0].startswith(FLAG_NONZERO_EXIT)
        assert flagged.tests_status.FAIL_TO_PASS.success == ["f"]  # the lists still say what the log says
        assert FLAG_NONZERO_EXIT in explain_grade(flagged)
    # A failing test outside the lists explains the exit status: the runner reported it.
    explained = grade({**status_map, "other": F}, ["f"], ["p"], returncode=1)
    assert explained.resolved and explained.untrusted == []
    assert grade(status_map, ["f"], ["p"], returncode=0).resolved
    assert grade(status_map, ["f"], ["p"], returncode=None).resolved  # a log without an exit status


def test_a_disagreement_with_the_runner_withholds_resolved() -> None:
    result = grade({"f": P, "p": P}, ["f"], ["p"], returncode=0, disagreements=["f: the runner says FAILED"])
    assert not result.resolved
    assert "the runner says FAILED" in explain_grade(result)


def test_to_fail_lists_are_reported_but_never_decide() -> None:
    result = grade({"f": P, "x": F, "y": P}, ["f"], [], fail_to_fail=["x"], pass_to_fail=["y"])
    assert result.resolved
    assert result.tests_status.FAIL_TO_FAIL.failure == ["x"]
    assert result.tests_status.PASS_TO_FAIL.success == ["y"]


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="swebench-2"):
        grade({}, [], [], rule="v9")  # type: ignore[arg-type]


def test_the_reason_counts_apart_the_tests_the_log_never_reports():
    status_map = {"a": TestStatus.PASSED, "b": TestStatus.FAILED}
    result = grade(status_map, ["a"], ["b", "c", "d"])
    assert explain_grade(result) == "3 of 3 PASS_TO_PASS tests fail"
    assert explain_grade(result, status_map) == \
        "3 of 3 PASS_TO_PASS tests fail (2 of them absent from the log: the run never reported them)"
