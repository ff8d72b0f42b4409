"""Ruby runners of SWE-bench Multilingual: minitest, test-unit, RSpec through jq, and jekyll's
two (minitest and its cucumber formatter).

- minitest `-v`: `TestClass#test_name. = 0.01 s = .` (shoulda-context names end in `. `); the
  id is the text before the last `. ` that a ` = ` result follows, the result is the last `.`,
  `F` or `E` on the line. As in the reference, that last character decides: a skipped test
  (`= S`) reads as passed from the `.` in its duration.
- cucumber (jekyll's formatter): `features/x.feature:6  Scenario: name ....` — the id is the text
  before the last space that dots follow; the steps end in `.` (passed) or `F` (failed).
- test-unit `-v`: `  test_name:   .: (0.001s)` (`test: ` before a described test); `.` passed,
  `F`/`E` failed, `O` (omitted) skipped; pending tests are not recorded.
- RSpec `--format json` turned by jq into `description - status` lines (some rows add the
  example id: `description - ./spec/x_spec.rb[1:2] - status`); pending examples are not recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from issuebench.models import TestStatus, TestStatusMap

if TYPE_CHECKING:
    from issuebench.models import Task

_MINITEST = {".": TestStatus.PASSED, "F": TestStatus.FAILED, "E": TestStatus.FAILED}
_TEST_UNIT = {".": TestStatus.PASSED, "E": TestStatus.FAILED, "F": TestStatus.FAILED, "O": TestStatus.SKIPPED}
_RSPEC = {" - passed": TestStatus.PASSED, " - failed": TestStatus.FAILED}
_JEKYLL_MINITEST = {"9141", "8047", "8167"}
_JEKYLL_CUCUMBER = {"8761", "8771"}


def _lines(log: str):
    return (raw.strip() for raw in log.split("\n"))


def _minitest_line(line: str) -> tuple[str, TestStatus] | None:
    last = max(line.rfind(mark) for mark in _MINITEST)
    if last < 0:
        return None
    equals = line.rfind("=", 0, last)
    if equals < 0:
        return None
    stop = line.rfind(". ", 1, equals)
    return (line[:stop], _MINITEST[line[last]]) if stop >= 1 else None


def parse_log_minitest(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for line in _lines(log):
        found = _minitest_line(line)
        if found is not None:
            result[found[0]] = found[1]
    return result


def _cucumber_line(line: str) -> tuple[str, TestStatus] | None:
    at = line.rfind(" .")
    while at >= 0:
        end = at + 1
        while end < len(line) and line[end] == ".":
            end += 1
        if end < len(line) and line[end] == "F":
            return line[:at], TestStatus.FAILED
        if end - at - 1 >= 2:
            return line[:at], TestStatus.PASSED
        at = line.rfind(" .", 0, at)
    return None


def parse_log_cucumber(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for line in _lines(log):
        found = _cucumber_line(line)
        if found is not None:
            result[found[0]] = found[1]
    return result


def _test_unit_result(line: str, start: int) -> tuple[str, TestStatus] | None:
    """The last `name:<whitespace><result>` with the name starting at `start`."""
    colon = line.rfind(":")
    while colon >= start + 1:
        pos = colon + 1
        while pos < len(line) and line[pos].isspace():
            pos += 1
        if pos > colon + 1 and pos < len(line) and line[pos] in _TEST_UNIT:
            mark = line[pos]
            after = line[pos + 1:pos + 2]
            if mark == "." or not (after.isalnum() or after == "_"):
                return line[start:colon], _TEST_UNIT[mark]
        colon = line.rfind(":", 0, colon)
    return None


def parse_log_ruby_unit(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for line in _lines(log):
        found = _test_unit_result(line, 6) if line.startswith("test: ") else None
        found = found or _test_unit_result(line, 0)
        if found is not None:
            result[found[0]] = found[1]
    return result


def parse_log_rspec_transformed_json(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for line in _lines(log):
        at, word = max((line.rfind(word), word) for word in _RSPEC)
        if at >= 1:
            result[line[:at]] = _RSPEC[word]
    return result


def parse_log_jekyll(log: str, task: Task | None = None) -> TestStatusMap:
    """jekyll's rows use minitest (PRs 9141, 8047, 8167) or cucumber (8761, 8771).

    Another or no task reads both forms; their lines do not pass for each other.
    """
    number = task.instance_id.split("-")[1] if task is not None and "-" in task.instance_id else None
    if number in _JEKYLL_MINITEST:
        return parse_log_minitest(log)
    if number in _JEKYLL_CUCUMBER:
        return parse_log_cucumber(log)
    return {**parse_log_cucumber(log), **parse_log_minitest(log)}
