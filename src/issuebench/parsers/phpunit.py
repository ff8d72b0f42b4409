"""PHPUnit `--testdox`: a class header `Prettified name (Fully\\Qualified\\ClassTest)` and one line
per test, `✔ name` passed, `✘ name` failed, `↩ name` skipped; the id is `Prettified name > test
name` (`None > name` before any header, as in the reference). Incomplete (`∅`) and risky tests
are not recorded.
"""

from __future__ import annotations

from issuebench.models import TestStatus, TestStatusMap
from issuebench.parsers.text import leading_space

_MARKS = {"✔": TestStatus.PASSED, "✘": TestStatus.FAILED, "↩": TestStatus.SKIPPED}


def _class_header(line: str) -> str | None:
    """`Round (Tests\\RoundTest)` -> `Round`: a word character first, up to the last ` (...)`."""
    if not line.endswith(")") or not line or not (line[0].isalnum() or line[0] == "_"):
        return None
    opening = line.rfind(" (", 0, len(line) - 2)
    return line[:opening] if opening >= 2 else None


def parse_log_phpunit(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    suite: str | None = None
    for line in log.split("\n"):
        header = _class_header(line)
        if header is not None:
            suite = header
            continue
        indent = leading_space(line)
        if indent < len(line) and line[indent] in _MARKS:
            result[f"{suite} > {line[indent + 1:].lstrip()}"] = _MARKS[line[indent]]
    return result
