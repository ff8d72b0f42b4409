"""The runner's report against the text log: ids matched as the parsers name them."""

from __future__ import annotations

import json

from issuebench.harness.runner_report import disagreements, keyed_like, read_report
from issuebench.models import TestStatus
from issuebench.parsers import get_parser

P, F = TestStatus.PASSED, TestStatus.FAILED


def report(tests: dict[str, str], *extra: dict) -> bytes:
    docs = [{"issuebench_runner_report": 1, "exitstatus": 0, "tests": tests}, *extra]
    return b"".join(json.dumps(d).encode() + b"\n" for d in docs)


def test_old_pytest_ids_of_class_instances_match_what_it_prints() -> None:
    runner = read_report(report({"t.py::TestX::()::test_a": "PASSED"}))
    assert keyed_like(get_parser("pytest"), runner.tests) == {"t.py::TestX::test_a": "PASSED"}
    assert disagreements({"t.py::TestX::test_a": P}, runner, ["t.py::TestX::test_a"], [], get_parser("pytest")) == []


def test_ids_go_through_the_parsers_own_rewriting() -> None:
    runner = read_report(report({"t.py::test_p[/tmp/x/a.txt]": "FAILED", "t.py::test_s[a b]": "PASSED"}))
    found = disagreements({"t.py::test_p[/a.txt]": P}, runner, ["t.py::test_p[/a.txt]"], [],
                          get_parser("pytest_options"))
    assert found == ["t.py::test_p[/a.txt]: the log says PASSED, the runner says FAILED"]
    assert disagreements({"t.py::test_s[a b]": P}, runner, [], ["t.py::test_s[a b]"], get_parser("pytest_v2")) == []


def test_a_test_the_runner_never_ran_is_a_disagreement_and_a_skip_is_no_pass() -> None:
    runner = read_report(report({"t.py::test_b": "SKIPPED"}))
    status_map = {"t.py::test_a": P, "t.py::test_b": P}
    found = disagreements(status_map, runner, ["t.py::test_a", "t.py::test_b"], [], get_parser("pytest"))
    assert found == ["t.py::test_a: the log says PASSED, the runner did not report it",
                     "t.py::test_b: the log says PASSED, the runner says SKIPPED"]
    # As PASS_TO_PASS a skip is a success on both sides.
    assert disagreements({"t.py::test_b": P}, runner, [], ["t.py::test_b"], get_parser("pytest")) == []


def test_anything_but_exactly_one_report_is_refused_and_none_is_no_check() -> None:
    two = read_report(report({"t.py::a": "PASSED"}, {"issuebench_runner_report": 1, "tests": {}}))
    assert two.problem and "2 reports" in two.problem
    assert disagreements({"t.py::a": P}, two, ["t.py::a"], [], get_parser("pytest")) == [two.problem]
    assert read_report(b"{not json\n").problem
    none = read_report(b"")
    assert not none.present and disagreements({"t.py::a": P}, none, ["t.py::a"], [], get_parser("pytest")) == []


def test_a_failing_test_in_the_text_is_never_questioned() -> None:
    runner = read_report(report({}))
    assert disagreements({"t.py::a": F}, runner, ["t.py::a"], [], get_parser("pytest")) == []


def test_a_progress_mark_the_reference_kept_as_a_test_id_is_not_questioned() -> None:
    # pytest-dev__pytest-5262 lists `[100%]` as a PASS_TO_PASS test: the reference's parser read a
    # nested run's `PASSED   [100%]` line. No runner reports it, and it names no test to forge.
    runner = read_report(report({"t.py::test_a": "PASSED"}))
    status_map = {"[100%]": P, "t.py::test_a": P, "t.py::test_b": P}
    assert disagreements(status_map, runner, [], ["[100%]", "t.py::test_a"], get_parser("pytest")) == []
    assert disagreements(status_map, runner, [], ["[100%]", "t.py::test_b"], get_parser("pytest")) == [
        "t.py::test_b: the log says PASSED, the runner did not report it"]


def test_a_name_in_a_file_the_command_never_named_is_not_questioned() -> None:
    # pytest-dev__pytest-7521: `test_capsysbinary.py::test_hello` is a nested session's summary line.
    doc = {"issuebench_runner_report": 1, "exitstatus": 0, "tests": {"testing/test_capture.py::test_a": "PASSED"},
           "asked_for": ["testing/test_capture.py"]}
    runner = read_report(json.dumps(doc).encode() + b"\n")
    assert runner.asked_for == ["testing/test_capture.py"]
    status_map = {"test_capsysbinary.py::test_hello": P, "testing/test_capture.py::test_a": P,
                  "testing/test_capture.py::test_b": P}
    graded = ["test_capsysbinary.py::test_hello", "testing/test_capture.py::test_a"]
    assert disagreements(status_map, runner, [], graded, get_parser("pytest")) == []
    # A file the command named is always checked: its tests cannot be printed into passing.
    assert disagreements(status_map, runner, [], ["testing/test_capture.py::test_b"], get_parser("pytest")) == [
        "testing/test_capture.py::test_b: the log says PASSED, the runner did not report it"]
    # Without the command's paths (an older report, `--pyargs`) every graded name is checked.
    old = read_report(report({"testing/test_capture.py::test_a": "PASSED"}))
    assert disagreements(status_map, old, [], graded, get_parser("pytest")) == [
        "test_capsysbinary.py::test_hello: the log says PASSED, the runner did not report it"]
