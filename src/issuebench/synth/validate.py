"""Validate one candidate in a workbench: apply it, run the tests that cover it, confirm, put back.

Kept when at least one test that passed on the working tree fails, nothing times out, and a second
run of the failing tests agrees. FAIL_TO_PASS: the tests failing in both runs; PASS_TO_PASS: the
covering tests that passed, plus the tests of the same files that never run the changed code
(with `scope="suite"` the whole suite runs instead, which is what the benchmark compares).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from issuebench.collect import FAIL, PASS, outcome
from issuebench.models import StrStatus
from issuebench.sandbox import RunStatus
from issuebench.synth.base import Candidate
from issuebench.synth.coverage_map import CoverageMap
from issuebench.synth.workbench import Workbench


class CandidateStatus(StrStatus):
    """How a candidate was decided, in the yield table's order."""

    KEPT = "kept"
    SYNTAX = "syntax_error"
    EQUIVALENT = "equivalent"
    DUPLICATE = "duplicate"
    NOT_COVERED = "not_covered"
    NOTHING_FAILS = "nothing_fails"
    TIMEOUT = "timeout"
    NOT_CONFIRMED = "not_confirmed"
    ERROR = "error"


KEPT = CandidateStatus.KEPT
SYNTAX = CandidateStatus.SYNTAX
EQUIVALENT = CandidateStatus.EQUIVALENT
DUPLICATE = CandidateStatus.DUPLICATE
NOT_COVERED = CandidateStatus.NOT_COVERED
NOTHING_FAILS = CandidateStatus.NOTHING_FAILS
TIMEOUT = CandidateStatus.TIMEOUT
NOT_CONFIRMED = CandidateStatus.NOT_CONFIRMED
ERROR = CandidateStatus.ERROR
STATUSES = tuple(CandidateStatus)
# Up to this many failing tests, the confirming run prints their tracebacks (formatting one costs
# tens of milliseconds, less than a run of its own); beyond, only the quoted test's are printed.
QUOTE_IN_CONFIRMING = 4
NOT_FOUND = re.compile(r"^ERROR: (?:file or directory )?not found: (.*)$", re.MULTILINE)


@dataclass
class Baseline:
    passed: set[str]          # PASSED in every run of the working tree
    suite_seconds: float      # one plain run of the whole suite


@dataclass
class Outcome:
    status: CandidateStatus
    FAIL_TO_PASS: list[str] = field(default_factory=list)
    PASS_TO_PASS: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    output: str = ""          # the confirming run's output, for the issue text
    seconds: float = 0.0
    runs: int = 0
    tests: int = 0            # tests selected per run (0: the whole suite)
    reason: str = ""


def covering_tests(cand: Candidate, cmap: CoverageMap, baseline: Baseline) -> list[str] | None:
    """Passing tests that run the changed functions; None: the whole suite (code runs at import)."""
    found: set[str] = set()
    for path, _qual, first, last in cand.functions:
        tests = cmap.tests_for(path, first, last, baseline.passed)
        if tests is None:
            return None
        found |= tests
    return sorted(found & baseline.passed)


def run_timeout(timeout: float, targets: list[str] | None, baseline: Baseline) -> float:
    """A run of some tests gets their share of the suite's time, ten times over, plus 30 s.

    Bugs that loop forever exist (a removed increment); waiting the whole-suite timeout for each
    of them is wasteful. But failing tests run slower than passing ones (tracebacks, assertion
    introspection, on a loaded machine more so), so the margin is wide: a timeout rejects a bug.
    """
    if targets is None or not baseline.passed:
        return timeout
    share = baseline.suite_seconds * len(targets) / len(baseline.passed)
    return min(timeout, 30.0 + 10.0 * share)


def _usable(run, result: Outcome) -> bool:
    if run.status == RunStatus.TIMEOUT:
        result.status, result.reason = TIMEOUT, run.reason
        return False
    if run.status != RunStatus.OK:
        result.status, result.reason = ERROR, f"{run.status}: {run.reason}"
        return False
    missing = NOT_FOUND.search(run.output)
    if missing and not any("::" not in test for test in run.status_map):
        # pytest ran nothing at all and no test module failed to import (that is a bug's doing:
        # older pytest says "not found" for its tests): every test would count as failing, a
        # task no bug made.
        result.status, result.reason = ERROR, f"pytest did not find {missing.group(1)[:200]}"
        return False
    return True


def runnable(tests: list[str]) -> list[str]:
    """Node ids pytest can select for these ids.

    The `-rA` summary's id is its first word, so a parametrized id with a space in its value is
    cut (`test_x[a b]` is `test_x[a`), and pytest, given it, runs nothing ("not found"). The
    test's function runs instead (every parametrization; the others' statuses are not read).
    """
    return sorted({t.split("[", 1)[0] if "[" in t and not t.endswith("]") else t for t in tests})


def _failing(run, selected: list[str]) -> set[str]:
    return {t for t in selected if outcome(run.status_map.get(t)) == FAIL}


def _issue_output(bench: Workbench, confirmed: list[str], timeout: float, result: Outcome) -> str:
    """Output holding the first confirmed test's traceback, which is what the issue text quotes.

    That test alone, with tracebacks; if it does not fail alone (it needs what the tests before
    it did), all of them again, as the confirming run printed them before.
    """
    alone = bench.run(runnable(confirmed[:1]), timeout=timeout, extra=["--tb=short"])
    result.runs += 1
    if alone.status == "ok" and outcome(alone.status_map.get(confirmed[0])) == FAIL:
        return alone.output
    result.runs += 1
    return bench.run(runnable(confirmed), timeout=timeout, extra=["--tb=short"]).output


def check(bench: Workbench, cand: Candidate, cmap: CoverageMap, baseline: Baseline, *, timeout: float,
          scope: str = "covering", fast: bool = True) -> Outcome:
    """Run the candidate's tests twice (the second only if the first fails some); the workbench is
    put back however it ends. A fault of the machinery raises, and the run records it as a
    Failure (executors.drive), to be validated again by a rerun.

    Both runs only decide which tests fail, so they print no tracebacks (`--tb=no`; the `-rA`
    summary lines give every status just the same): formatting them was most of a run where
    many tests fail. The issue text's traceback comes from a run of the one test it quotes, or,
    when only a few fail, from the confirming run printing theirs.
    `fast=False` is the earlier way (tracebacks in both runs; the second run's output).

    In phases: the covering tests (none: not covered) -> the candidate applied -> the deciding
    run -> the confirming run of what failed (_decide) -> the lists (_lists) -> the candidate undone.
    """
    start = time.monotonic()
    targets = covering_tests(cand, cmap, baseline) if scope == "covering" else None
    if targets is not None and not targets:
        return Outcome(NOT_COVERED, seconds=time.monotonic() - start)
    result = Outcome(ERROR, tests=len(targets or []))
    bench.apply(cand.changes)
    try:
        _decide(bench, targets, baseline, timeout, fast, result)
        return result
    finally:
        bench.apply(cand.changes, undo=True)
        result.seconds = time.monotonic() - start


def _decide(bench: Workbench, targets: list[str] | None, baseline: Baseline, timeout: float, fast: bool,
            result: Outcome) -> None:
    """The first run decides; the confirming run repeats only the tests that failed in it. A test
    listed as passing passed here and in both runs of the working tree."""
    selected = sorted(baseline.passed) if targets is None else targets
    tb = ["--tb=no" if fast else "--tb=short"]
    run = bench.run(None if targets is None else runnable(targets),
                    timeout=run_timeout(timeout, targets, baseline), extra=tb)
    result.runs += 1
    if not _usable(run, result):
        return
    failing = _failing(run, selected)
    if not failing:
        result.status = NOTHING_FAILS
        return
    # A few tracebacks cost less than another run: then the confirming run prints them and its
    # output is the issue text's, as before.
    separate = fast and len(failing) > QUOTE_IN_CONFIRMING
    again = bench.run(runnable(sorted(failing)), timeout=timeout, extra=tb if separate else ["--tb=short"])
    result.runs += 1
    if not _usable(again, result):
        return
    confirmed = _failing(again, sorted(failing))
    _lists(result, run, selected, targets, baseline, failing, confirmed)
    result.output = _issue_output(bench, result.FAIL_TO_PASS, timeout, result) if separate and confirmed \
        else again.output
    result.status = KEPT if result.FAIL_TO_PASS else NOT_CONFIRMED


def _lists(result: Outcome, run, selected: list[str], targets: list[str] | None, baseline: Baseline,
           failing: set[str], confirmed: set[str]) -> None:
    result.FAIL_TO_PASS = sorted(confirmed)
    result.flaky = sorted(failing - confirmed)
    result.PASS_TO_PASS = [t for t in selected if t not in failing and outcome(run.status_map.get(t)) == PASS]
    if targets is not None:
        # Tests of the same files that never execute the changed functions cannot see the bug:
        # they pass as they did on the working tree, and `eval` runs them anyway.
        files = {t.split("::")[0] for t in [*result.FAIL_TO_PASS, *result.PASS_TO_PASS]}
        ran = set(targets)
        result.PASS_TO_PASS += sorted(t for t in baseline.passed if t not in ran and t.split("::")[0] in files)
