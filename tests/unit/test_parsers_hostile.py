"""Every non-Python parser returns on a 1 MB hostile line built against its own patterns (the kind
of line that makes a backtracking regular expression take hours); a generous bound, not a speed
test. Each parser runs in a forked process: a regular expression stuck in backtracking holds the
interpreter lock, so a thread running it could not be waited for with a timeout."""

from __future__ import annotations

import multiprocessing

import pytest

from issuebench.parsers import get_parser

MB = 1_000_000


def _repeat(piece: str, prefix: str = "", suffix: str = "") -> str:
    return prefix + piece * ((MB - len(prefix) - len(suffix)) // len(piece)) + suffix


HOSTILE = {
    "jest": _repeat(" (12 m", "✓ x"),
    "jest_json": _repeat(" ", "[PASSED]", "x"),
    "vitest": _repeat(" 1", "✓ x", " 1m"),
    "karma": "Starting browser\n" + _repeat(" ", "", "✔"),
    "tap": _repeat("1 ", "ok "),
    "immutable_js": _repeat(" (1", "✓ "),
    "calypso": " ./node_modules/.bin/jest \n" + _repeat("(1ms) (", "  ✓ "),
    "chart_js": _repeat("Chrome 1 (", "", " FAILED"),
    "marked": _repeat(" ", "1)", "x"),
    "p5js": _repeat("<a><b>", "", "</c>") + "\n" + _repeat("1)", " 1)"),
    "react_pdf": _repeat(" (1", "PASS "),
    "redis": _repeat(" in", "[err]: x", " in x"),
    "jq": _repeat(" ", "PASS:", "x"),
    "doctest": _repeat("<TestCase>", "<doctest>"),
    "micropython_test": _repeat(" ", "pass", "x"),
    "googletest": _repeat("[ OK ] (", "", " (0 ms"),
    "gotest": _repeat(" (", "--- PASS: x", ")"),
    "cargo": _repeat(" ", "test x", "..."),
    "maven": _repeat("-Dtest= ", "", "BUILD"),
    "ant": _repeat(" ", "[junit]", "[PASS]"),
    "gradle_custom": _repeat(" ", "a", "bPASSED"),
    "phpunit": _repeat(" (", "a", ")x"),
    "minitest": _repeat(". =", "x"),
    "cucumber": _repeat(" .", "x"),
    "ruby_unit": _repeat(":   ", "test: "),
    "rspec_transformed_json": _repeat(" - passe", "x"),
    "jekyll": _repeat(". = .", "x"),
    # The Python parsers, on the shapes that made their old patterns backtrack.
    "pytest_options": _repeat("[a", "PASSED x"),
    "sympy": _repeat(" a", "", ".py:"),
    "unittest": _repeat(" ... t (m.C)", "t (m.C)"),
    "django": _repeat(" ... t (m.C)", "t (m.C)"),
    "pytest": _repeat("=", "= ", " in 1s"),
}


def _cut(line: str) -> None:
    from issuebench.harness.guards import cut_after_runner_summary

    cut_after_runner_summary(line)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_parser_returns_on_a_hostile_megabyte(name: str) -> None:
    parser = get_parser(name)
    line = HOSTILE[name]
    _run_bounded(name, parser, line)


@pytest.mark.parametrize("line", [_repeat("=", "= ", " in 1s"), _repeat(" passed", "=== ", " in 1s"),
                                  _repeat(" 1", "Ran", "s")], ids=["fill", "words", "unittest"])
def test_the_runner_summary_guard_returns_on_a_hostile_megabyte(line: str) -> None:
    _run_bounded("cut_after_runner_summary", _cut, line)


def _run_bounded(name, parser, line) -> None:
    assert len(line) >= MB - 20
    worker = multiprocessing.get_context("fork").Process(target=parser, args=(line,), daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():
        worker.kill()
        worker.join()
        pytest.fail(f"{name} did not return within 10 s on a 1 MB line")
    assert worker.exitcode == 0, f"{name} failed on the line"
