"""`cargo test`: `test path::to::name ... ok` passed, `... FAILED` failed.

An `ignored` test is not recorded, as in the reference (it then counts as missing).
"""

from __future__ import annotations

import re

from issuebench.models import TestStatus, TestStatusMap

# Every quantifier stands between characters it cannot take, so the match is linear.
_RESULT = re.compile(r"test\s+(\S+)\s+\.\.\.\s+(\w+)")
_OUTCOMES = {"ok": TestStatus.PASSED, "FAILED": TestStatus.FAILED}


def parse_log_cargo(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        match = _RESULT.fullmatch(raw.strip())
        if match is not None and match.group(2) in _OUTCOMES:
            result[match.group(1)] = _OUTCOMES[match.group(2)]
    return result
