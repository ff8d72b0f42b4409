"""A run that fixes the issue and fails only PASS_TO_PASS tests is run again (harness.flaky).

The task is the attack suites' (attack_world.py); the patches make `mul` wrong in the first test
run only, counting runs in a file outside the workspace. That needs a state the sandbox exists to
deny, so these runs go without it: what is tested is the rerun rule above the sandbox, on real git,
a real environment and real pytest.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from issuebench.models import InstanceStatus
from tests.integration.attack_world import CORE, FIXED, diff_for, evaluate

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("flaky")]


def _mul_fails_in_run(counter: Path, failing_runs: str) -> str:
    """Code run at import: counts the test runs in `counter`; `mul` is wrong when the run's number
    satisfies `failing_runs` (a Python expression of `run`)."""
    return f"""
    import pathlib
    _counter = pathlib.Path({str(counter)!r})
    run = int(_counter.read_text()) + 1 if _counter.exists() else 1
    _counter.write_text(str(run))
    if {failing_runs}:
        mul = lambda a, b: a * b + 1
    """


def _evaluate(world, counter: Path, patch: str, name: str, **options):
    counter.unlink(missing_ok=True)
    report = evaluate(world, patch, name, no_sandbox=True, **options)
    return report, int(counter.read_text())


def _patch(world, counter: Path, failing_runs: str, *, fixed: bool) -> str:
    # The counting code comes after the module's own definitions, so its wrong `mul` wins.
    body = (FIXED if fixed else CORE) + "\n" + textwrap.dedent(_mul_fails_in_run(counter, failing_runs)).strip()
    return diff_for(world["repo"], {"calc/core.py": body + "\n"})


def test_a_fix_whose_passing_test_fails_once_is_resolved_on_the_rerun(world, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    patch = _patch(world, counter, "run == 1", fixed=True)
    report, runs = _evaluate(world, counter, patch, "flaky-once")
    assert runs == 2
    assert report.status is InstanceStatus.RESOLVED, report.reason
    assert any(n.startswith("flaky: 1 PASS_TO_PASS") and "test_mul" in n for n in report.notes), report.notes
    folder = world["root"] / "out" / "logs" / "run_evaluation" / "flaky-once" / "flaky-once" / "acme__calc-1"
    assert "FAILED tests/test_core.py::test_mul" in (folder / "test_output.run1.txt").read_text()


def test_with_no_reruns_the_first_run_decides(world, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    patch = _patch(world, counter, "run == 1", fixed=True)
    report, runs = _evaluate(world, counter, patch, "flaky-none", flaky_reruns=0)
    assert (runs, report.status) == (1, InstanceStatus.UNRESOLVED)


def test_a_run_that_misses_the_fix_is_never_rerun(world, tmp_path: Path) -> None:
    # The bug stays and a passing test fails once: a rerun could only ever help a non-fix.
    counter = tmp_path / "runs"
    report, runs = _evaluate(world, counter, _patch(world, counter, "run == 1", fixed=False), "nofix")
    assert (runs, report.status) == (1, InstanceStatus.UNRESOLVED)


def test_a_test_broken_every_time_stays_broken_after_the_rerun(world, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    report, runs = _evaluate(world, counter, _patch(world, counter, "True", fixed=True), "broken")
    assert (runs, report.status) == (2, InstanceStatus.UNRESOLVED)
    assert report.tests_status.PASS_TO_PASS.failure == ["tests/test_core.py::test_mul"]
    assert not any(n.startswith("flaky:") for n in report.notes)
