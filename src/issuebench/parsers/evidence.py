"""Whether a log shows that its test runner ran at least one test.

Parsers of `fail_only` repositories (Chart.js, marked, p5.js) record failures only, so a run in
which every test passed parses to nothing, exactly like a run that never started. The runner's
own closing counts tell the two apart; the reference harness (swebench 5) reads the same lines.
Every count must be at least one: karma prints `Executed 0 of 0` when its browser died at once.
"""

from __future__ import annotations

import re

# Each alternative starts with a literal and its quantifiers stand between characters they cannot
# both take, so the search is linear in the log's length.
_RAN = re.compile(
    r"Executed [1-9]\d* of \d+"                        # karma
    r"|TOTAL: [1-9]\d* (?:SUCCESS|FAILED)"             # karma's total line
    r"|[1-9]\d* passing"                               # mocha
    r"|Tests:[ \t]+[1-9]\d*"                           # jest
    r"|Test Suites:[ \t]+(?:\d+ [a-z]+, )*[1-9]\d* total"  # jest, per file
    r"|^# tests [1-9]\d*"                              # TAP (mocha -R tap)
    r"|[1-9]\d* specs?, \d+ failures?"                 # jasmine (marked) on a clean run
    r"|': ok$",                                        # openlayers' rendering cases
    re.MULTILINE,
)


def suite_ran(log: str) -> bool:
    return _RAN.search(log) is not None
