"""The verdict of a run whose tests ran and were parsed: the grade, and what withholds it.

Three things can stand between a log that reads "resolved" and the verdict: the runner's own report
(harness.runner_report) contradicting the log, an exit status the log does not explain (grading),
and, in strict mode, a patch that reaches into the test run (guards.suspicious_lines).
"""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

from issuebench.envs import left_out_packages
from issuebench.grading import explain_grade, grade
from issuebench.harness.runner_report import disagreements
from issuebench.models import EnvSpec, InstanceReport, InstanceStatus, Task, TestsStatus
from issuebench.parsers import get_parser

STRICT_REACHES_IN = "patch_reaches_into_the_test_run"
# What pytest's importorskip and Python's import error print; bounded, so linear on any log.
_IMPORT_FAILED = re.compile(r"(?:could not import|No module named) '([A-Za-z0-9_][A-Za-z0-9_.]{0,200})'")


def parser_name(task: Task, spec: EnvSpec) -> str:
    return task.log_parser or spec.log_parser


def runner_disagreements(task: Task, spec: EnvSpec, run) -> list[str]:  # run: harness.instance.TestRun
    """Graded tests the text log passes and the runner's own report does not (none without one)."""

    if task.eval_type == "fail_only":
        return []  # only explicit failures count there; the runner cannot add any the log lacks
    return disagreements(run.status_map, run.runner_report, task.FAIL_TO_PASS, task.PASS_TO_PASS,
                         get_parser(parser_name(task, spec)))


def graded(report: InstanceReport, task: Task, spec: EnvSpec, run, *, strict: bool,
           suspicious: list[str]) -> InstanceReport:
    """`report` with the grade of `run` (whose tests ran and were parsed) filled in."""
    g = grade(run.status_map, task.FAIL_TO_PASS, task.PASS_TO_PASS, eval_type=task.eval_type,
              strict=strict, returncode=run.returncode, disagreements=runner_disagreements(task, spec, run))
    if strict and suspicious and g.resolved:
        # Strict mode withholds a pass that the patch may have produced from inside the run.
        g = g.model_copy(update={"resolved": False, "resolution": "no",
                                 "strict_flags": [*g.strict_flags, STRICT_REACHES_IN]})
    report = report.model_copy(update={
        "tests_status": g.tests_status, "resolved": g.resolved, "outcome": g.outcome,
        "status": InstanceStatus.RESOLVED if g.resolved else InstanceStatus.UNRESOLVED,
        "reason": explain_grade(g, run.status_map) + ("" if g.resolved else _left_out_and_needed(run)),
        "notes": [*report.notes, *g.strict_flags, *g.untrusted],
    })
    if not g.resolved and spec.needs_network:
        report = report.model_copy(update={
            "status": InstanceStatus.NEEDS_NETWORK,
            "reason": "the task's tests need the internet, which the sandbox does not give: " + report.reason})
    elif not g.resolved and _only_network_tests_fail(g.tests_status, spec.network_tests):
        report = report.model_copy(update={
            "status": InstanceStatus.NEEDS_NETWORK,
            "reason": "only tests that fetch from the internet fail (the sandbox gives none; the recipe "
                      "names them): " + report.reason})
    return report


def _only_network_tests_fail(tests_status: TestsStatus, network_tests: list[str]) -> bool:
    """Whether every graded test that failed is one the recipe names as fetching from the internet."""
    failing = [*tests_status.FAIL_TO_PASS.failure, *tests_status.PASS_TO_PASS.failure]
    return bool(network_tests) and bool(failing) and all(_named(test, network_tests) for test in failing)


def _named(test: str, network_tests: list[str]) -> bool:
    """An entry names a test exactly, or, ending in `*`, every test its prefix begins (a whole file
    of link checks, `tests/test_build_linkcheck.py::*`); no other pattern: ids hold brackets."""
    return any(test == entry or (entry.endswith("*") and test.startswith(entry[:-1])) for entry in network_tests)


def _left_out_and_needed(run) -> str:  # run: harness.test_run.TestRun
    """A clause naming the packages the environment left out that the log shows the tests failing to
    import ("" if none): a miss no patch could turn, said as such in the verdict's one line."""
    manifest = getattr(run, "env_manifest", None) or {}   # a run of another backend has none
    left_out = {canonicalize_name(n): n for n in left_out_packages(manifest.get("decisions", []))}
    if not left_out:
        return ""
    log = getattr(run, "test_output", None) or getattr(run, "output", "") or ""
    imported = {canonicalize_name(m.split(".")[0]) for m in _IMPORT_FAILED.findall(log)}
    needed = [name for key, name in left_out.items() if key in imported]
    if not needed:
        return ""
    return (f"; the log shows tests that could not import {', '.join(needed)}, which the environment left out "
            "(no release on the package index installs here: a conda-only package)")
