"""Tests a recipe names as fetching from the internet: a run whose only failures are among them is
`needs_network` (p5.js's loadJSON example, axios's postman-echo test), never resolved; any other
failure keeps it `unresolved`."""

from __future__ import annotations

from types import SimpleNamespace

from issuebench.harness.runner_report import RunnerReport
from issuebench.harness.verdict import graded
from issuebench.models import EnvSpec, InstanceReport, InstanceStatus, Task

NETWORK = "src/io/files.js:loadJSON documentation:example #1 works"
TASK = Task(instance_id="o__r-1", repo="o/r", base_commit="0" * 40, patch="", test_patch="",
            FAIL_TO_PASS=["fixed"], PASS_TO_PASS=["kept", NETWORK], log_parser="tap")
SPEC = EnvSpec(kind="node", log_parser="tap", network_tests=[NETWORK])


def _grade(status_map: dict[str, str], spec: EnvSpec = SPEC) -> InstanceReport:
    returncode = 1 if "FAILED" in status_map.values() else 0
    run = SimpleNamespace(status_map=status_map, returncode=returncode, runner_report=RunnerReport())
    report = InstanceReport(instance_id=TASK.instance_id, model_name_or_path="gold", status=InstanceStatus.ERROR)
    return graded(report, TASK, spec, run, strict=False, suspicious=[])


def test_a_run_failing_only_a_network_test_needs_the_network() -> None:
    report = _grade({"fixed": "PASSED", "kept": "PASSED", NETWORK: "FAILED"})
    assert report.status is InstanceStatus.NEEDS_NETWORK and not report.resolved
    assert "fetch from the internet" in report.reason and "1 of 2 PASS_TO_PASS" in report.reason


def test_any_other_failure_stays_unresolved() -> None:
    report = _grade({"fixed": "FAILED", "kept": "PASSED", NETWORK: "FAILED"})
    assert report.status is InstanceStatus.UNRESOLVED
    without_list = _grade({"fixed": "PASSED", "kept": "PASSED", NETWORK: "FAILED"},
                          SPEC.model_copy(update={"network_tests": []}))
    assert without_list.status is InstanceStatus.UNRESOLVED


def test_a_run_that_passes_everything_is_resolved_whatever_the_list() -> None:
    report = _grade({"fixed": "PASSED", "kept": "PASSED", NETWORK: "PASSED"})
    assert report.status is InstanceStatus.RESOLVED and report.resolved


def test_an_entry_ending_in_a_star_names_every_test_its_prefix_begins() -> None:
    # sphinx's linkcheck tests check links to public sites: a whole file of them.
    spec = SPEC.model_copy(update={"network_tests": ["tests/test_build_linkcheck.py::*"]})
    task = TASK.model_copy(update={"FAIL_TO_PASS": ["tests/test_build_linkcheck.py::test_defaults"],
                                   "PASS_TO_PASS": ["tests/test_build_linkcheck.py::test_anchors[x]", "kept"]})
    run = SimpleNamespace(returncode=1, runner_report=RunnerReport(), status_map={
        "tests/test_build_linkcheck.py::test_defaults": "FAILED",
        "tests/test_build_linkcheck.py::test_anchors[x]": "FAILED", "kept": "PASSED"})
    report = graded(InstanceReport(instance_id=task.instance_id, model_name_or_path="gold",
                                   status=InstanceStatus.ERROR), task, spec, run, strict=False, suspicious=[])
    assert report.status is InstanceStatus.NEEDS_NETWORK
    # The prefix is a prefix, not a pattern: another file's failure stays unresolved.
    run.status_map["kept"] = "FAILED"
    assert graded(InstanceReport(instance_id=task.instance_id, model_name_or_path="gold",
                                 status=InstanceStatus.ERROR), task, spec, run, strict=False,
                  suspicious=[]).status is InstanceStatus.UNRESOLVED
