"""SymPy's `bin/test -C --verbose`, read the way the reference reads it.

Verbose mode prints `test_name ok`, `test_name F` or `test_name E` per test. Failures are also
announced by headers `____ sympy/core/tests/test_x.py:test_name ____`; the reference marks every
such header's `file.py:test` id FAILED (those ids rarely appear in datasets, which use bare test
names, but the reference's map holds them and so does this one).
"""

from __future__ import annotations

import re

from issuebench.models import TestStatus, TestStatusMap

# As in the reference: underscores optional, so any ` x.py:y ` shaped text counts as a header.
_HEADER = re.compile(r"(_*) (.*)\.py:(.*) (_*)")
# The pattern backtracks over long lines (quadratic in their spaces); a header is a short line, so
# longer lines are not tried (the reference reads them, and can run for hours on hostile output).
_MAX_HEADER_LINE = 2000
_VERDICTS = ((" E", TestStatus.ERROR), (" F", TestStatus.FAILED), (" ok", TestStatus.PASSED))


def parse_log_sympy(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        if ".py:" not in raw or len(raw) > _MAX_HEADER_LINE:
            continue
        for match in _HEADER.findall(raw):
            result[f"{match[1]}.py:{match[2]}"] = TestStatus.FAILED
    for raw in log.split("\n"):
        line = raw.strip()
        if not line.startswith("test_"):
            continue
        for suffix, status in _VERDICTS:
            if line.endswith(suffix):
                result[line.split()[0]] = status
    return result
