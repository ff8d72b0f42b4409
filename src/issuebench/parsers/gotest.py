"""`go test -v`: `--- PASS: TestName (0.00s)`, `--- FAIL: ...`, `--- SKIP: ...`.

Subtests are indented and named `TestParent/sub_name`; the id is the name as go prints it.
"""

from __future__ import annotations

from issuebench.models import TestStatus, TestStatusMap

_WORDS = {"--- PASS: ": TestStatus.PASSED, "--- FAIL: ": TestStatus.FAILED, "--- SKIP: ": TestStatus.SKIPPED}


def _name_before_duration(rest: str) -> str | None:
    """`TestX (0.00s)` -> `TestX`: up to the last ` (` that leaves something inside the parentheses."""
    if not rest.endswith(")"):
        return None
    opening = rest.rfind(" (", 0, len(rest) - 2)
    return rest[:opening] if opening >= 1 else None


def parse_log_gotest(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        line = raw.strip()
        for word, status in _WORDS.items():
            if line.startswith(word):
                name = _name_before_duration(line[len(word):])
                if name is not None:
                    result[name] = status
                break
    return result
