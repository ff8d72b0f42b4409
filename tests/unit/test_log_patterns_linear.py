"""Every regular expression setup runs over a log ends in linear time on a megabyte of hostile text.

Logs are the code under test's output: progress bars print long runs of letters, digits and bar
characters on one line. tqdm's log held one, and a diagnosis pattern backtracked over it for good.
"""

from __future__ import annotations

import time

import pytest

from issuebench.setup import diagnose, judging, log_regex, offline_tests, sample
from issuebench.setup.runner import Run

MEGABYTE = 1_000_000
# Shapes that make a backtracking engine go quadratic on the patterns of data/diagnose.toml and
# the judging code: runs of a pattern's repeated class, and prefixes repeated so that every
# position starts a match that fails at the end of the line.
HOSTILE = {
    "one letter": "a" * MEGABYTE,
    "word characters and dots": "a.b-c_" * (MEGABYTE // 6),
    "progress bar": ("\r 45%|" + "\u2588" * 40 + "     | 450/1000 [00:01<00:02, 300.5it/s]") * (MEGABYTE // 90),
    "repeated 'Because '": "Because " * (MEGABYTE // 8),
    "repeated 'you require '": "and you require a" * (MEGABYTE // 17),
    "a long = rule": "=== " + "=" * MEGABYTE + "x",
    "a long - rule": "--- " + "-" * MEGABYTE + "x",
    "underscores and spaces": "_ " * (MEGABYTE // 2),
    "digits and dots": "1." * (MEGABYTE // 2),
    "colons": "a.py::" * (MEGABYTE // 6),
    "ERROR: not found": "ERROR: not found: a::b " * (MEGABYTE // 23),
}
SECONDS = 5.0      # each pattern over each text; a quadratic one takes hours


def _timed(label: str, call) -> None:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    call()
    took = time.monotonic() - started
    assert took < SECONDS, f"{label} took {took:.1f}s"


def _diagnosis_patterns() -> list:
    return [regex for regex, _ in diagnose._patterns()]


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_every_log_pattern_is_linear_on_a_megabyte_of_hostile_text(shape: str) -> None:
    text = HOSTILE[shape]
    patterns = [*_diagnosis_patterns(), offline_tests._network(), offline_tests._absent_program(),
                *log_regex.COMPILED]
    assert len(patterns) > 40          # the table's and the judging code's patterns are all here
    for pattern in patterns:
        _timed(f"{pattern.pattern[:60]!r} on {shape}", lambda p=pattern: list(p.finditer(text)))


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_the_functions_that_read_logs_are_linear_on_hostile_text(shape: str) -> None:
    text = HOSTILE[shape]
    _timed(f"diagnose on {shape}", lambda: diagnose.diagnose(text))
    _timed(f"offline_failures on {shape}",
           lambda: offline_tests.offline_failures(text + "\nName or service not known", ["t::a", "t::b"]))
    _timed(f"program_failures on {shape}",
           lambda: offline_tests.program_failures(text + "\nredis-server: not found", ["t::a", "t::b"]))
    _timed(f"id_samples on {shape}", lambda: sample.id_samples(text))
    _timed(f"without_unfound_ids on {shape}", lambda: sample.without_unfound_ids("pytest a.py::b", text))
    run = Run("test", log=text)
    _timed(f"quiet_pytest on {shape}", lambda: judging.quiet_pytest(run, _pytest_plan()))


def test_the_hang_found_on_tqdm_is_gone() -> None:
    """The pattern that stopped collect: a name before `was not found in the package registry`,
    over a long run of name characters with no such phrase after it."""
    log = "Resolved 12 packages\n" + "#" * 10 + "a" * MEGABYTE + "\nFAILED tests/test_x.py::test_y\n"
    _timed("diagnose on tqdm's log", lambda: diagnose.diagnose(log))
    found = diagnose.diagnose("  x  pkgx was not found in the package registry\n")
    assert found is not None and found.found["missing"] == ["pkgx"]


def _pytest_plan():  # type: ignore[no-untyped-def]
    from issuebench.models import EnvSpec
    from issuebench.setup.plan import Plan

    return Plan(spec=EnvSpec(python="3.11", test_cmd="pytest -rA", log_parser="pytest"), runner="pytest",
                test_args=[], pythons=["3.11"], origin="extracted")


@pytest.mark.parametrize("parser", ["pytest", "pytest_v2", "unittest", "sympy"])
def test_setup_parses_a_hostile_log_in_bounded_time(parser: str) -> None:
    """The shared log parsers backtrack on long lines; setup cuts overlong lines before they read
    a log, so a megabyte of one line (or of a progress bar) is parsed at once."""
    from issuebench.setup.runner import parse_log

    for shape, text in HOSTILE.items():
        _timed(f"{parser} parser on {shape}", lambda t=text: parse_log(parser, t + "\ntests/a.py::t PASSED\n"))
    assert parse_log("pytest", "x" * 5000 + "\nPASSED tests/a.py::test_b\n") == {"tests/a.py::test_b": "PASSED"}
