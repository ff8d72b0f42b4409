"""JavaScript test runners: jest, jest's JSON through jq, vitest, karma (mocha reporter), TAP.

Ids are the reference harness's (SWE-bench Multilingual / Multimodal rows), with its quirks kept
where they decide a verdict:

- jest `--verbose`: `✓ name (12 ms)` passed, `✕ name` failed, `○ name` skipped; the id is the
  test's own title without its describe blocks and without the duration. jest writes a skipped
  test as `○ skipped name`, and the id keeps the word `skipped` (the reference's id).
- jest JSON: one `[PASSED] full name` / `[FAILED] full name` line per test (a jq filter over
  `jest --json` prints them); other statuses are not recorded.
- vitest `--reporter=verbose`: `✓ file > describe > name 3ms`, `× ...` failed, `↓ ...` skipped;
  the id is the whole path without the duration.
- karma with karma-mocha-reporter (preact): the lines after `Starting browser` up to `SUMMARY:`;
  an indented line without a mark opens a describe block, `✔ name` / `✖ name` are a test, and
  the id is the blocks joined with ` > `. As in the reference, a block opens only when it is
  indented deeper than the last one, and a shallower line closes one block without opening its
  own, so a second top-level describe keeps the first one's name.
- TAP (mocha `-R tap`, qunit's CLI): `ok N name` passed, `not ok N name` failed; a directive
  (`# SKIP`) stays part of the name, as in the reference, so it never matches a listed id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from issuebench.models import TestStatus, TestStatusMap
from issuebench.parsers.text import cut_bare_duration, cut_duration, leading_space, split_status_word

if TYPE_CHECKING:
    from issuebench.models import Task

_JEST_MARKS = {"✓": TestStatus.PASSED, "✕": TestStatus.FAILED, "○": TestStatus.SKIPPED}
_VITEST_MARKS = {"✓": TestStatus.PASSED, "×": TestStatus.FAILED, "↓": TestStatus.SKIPPED}
_KARMA_MARKS = {"✔": TestStatus.PASSED, "✖": TestStatus.FAILED}
_JSON_WORDS = {"[PASSED]": TestStatus.PASSED, "[FAILED]": TestStatus.FAILED}
_TAP_WORDS = {"ok": TestStatus.PASSED, "not ok": TestStatus.FAILED}


def _marked_lines(log: str, marks: dict[str, TestStatus]):
    """(status, text after the mark) for each stripped line `<mark><space><text>`."""
    for raw in log.split("\n"):
        found = split_status_word(raw.strip(), tuple(marks))
        if found is not None:
            yield marks[found[0]], found[1]


def parse_log_jest(log: str) -> TestStatusMap:
    return {cut_duration(text).strip(): status for status, text in _marked_lines(log, _JEST_MARKS)}


def parse_log_jest_json(log: str) -> TestStatusMap:
    return {name: status for status, name in _marked_lines(log, _JSON_WORDS)}


def parse_log_vitest(log: str) -> TestStatusMap:
    return {cut_bare_duration(text): status for status, text in _marked_lines(log, _VITEST_MARKS)}


def _karma_line(line: str) -> tuple[int, TestStatus | None, str] | None:
    """(indent, status, text) of a line the reference's karma pattern accepts, else None.

    A mark needs whitespace after it; without a mark the line is an indent (all but one of its
    leading whitespace characters), one whitespace character and the text.
    """
    indent = leading_space(line)
    if indent + 1 < len(line) and line[indent] in _KARMA_MARKS and line[indent + 1].isspace():
        return indent, _KARMA_MARKS[line[indent]], line[indent + 2:]
    if indent >= 1:
        return indent - 1, None, line[indent:]
    return None


def parse_log_karma(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    depth = -1
    blocks: list[str] = []
    started = False
    for line in log.split("\n"):
        if line.startswith("SUMMARY:"):
            break
        if "Starting browser" in line:
            started = True
            continue
        parsed = _karma_line(line) if started else None
        if parsed is None:
            continue
        indent, status, text = parsed
        if status is None:
            if indent > depth and indent > 0:
                depth = indent
                blocks.append(text)
            elif 0 < indent < depth:
                depth = indent
                if blocks:  # the reference fails on this log; here the block list just stays empty
                    blocks.pop()
            continue
        result[" > ".join([*blocks, text])] = status
    return result


def parse_log_tap(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        line = raw.strip()
        word = "not ok" if line.startswith("not ok ") else "ok" if line.startswith("ok ") else None
        if word is None:
            continue
        number, _, name = line[len(word) + 1:].partition(" ")
        if number.isdecimal() and name:
            result[name] = _TAP_WORDS[word]
    return result


def parse_log_immutable_js(log: str, task: Task | None = None) -> TestStatusMap:
    """immutable-js changed runners: PR 2006 is jest `--verbose`, PR 2005 jest's JSON.

    Another or no task reads both forms (their lines cannot be mistaken for each other).
    """
    number = task.instance_id.rsplit("-", 1)[-1] if task is not None else None
    if number == "2006":
        return parse_log_jest(log)
    if number == "2005":
        return parse_log_jest_json(log)
    return {**parse_log_jest(log), **parse_log_jest_json(log)}
