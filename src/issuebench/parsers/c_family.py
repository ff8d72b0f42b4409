"""C and C++ runners of SWE-bench Multilingual: redis's Tcl runner, automake's `make check` (jq),
doctest's XML reporter, micropython's run-tests.py and googletest (through `ctest -V`).

- redis / valkey: `[ok]: name (12 ms)` passed, `[err]: name in tests/unit/x.tcl` failed (the
  ` in <file>` is cut), `[skip]: name` and `[ignore]: name` skipped.
- jq: automake's `PASS: tests/jqtest` / `FAIL: name`; other results (SKIP, XFAIL, ERROR) are not
  recorded, as in the reference.
- doctest (`-s -r=xml`): one id per subcase, `test case > subcase`, passed when every expression
  in it succeeded; test cases without subcases are not recorded, as in the reference.
- micropython: `pass  basics/fun1.py`, `FAIL  ...`, `skip  ...`.
- googletest: `[       OK ] Suite.Test (0 ms)` passed, `[  FAILED  ] Suite.Test (0 ms)` failed
  (ctest's `1: ` prefix may stand before); a skipped test is not recorded, as in the reference.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from issuebench.models import TestStatus, TestStatusMap
from issuebench.parsers.text import cut_duration, split_status_word

_REDIS_WORDS = {"[ok]:": TestStatus.PASSED, "[err]:": TestStatus.FAILED,
                "[skip]:": TestStatus.SKIPPED, "[ignore]:": TestStatus.SKIPPED}
_AUTOMAKE_WORDS = {"PASS:": TestStatus.PASSED, "FAIL:": TestStatus.FAILED}
_MICROPYTHON_WORDS = {"pass": TestStatus.PASSED, "FAIL": TestStatus.FAILED, "skip": TestStatus.SKIPPED}
_GTEST_RESULT = re.compile(r"\[\s*(OK|FAILED)\s*\]\s")
_GTEST_STATUS = {"OK": TestStatus.PASSED, "FAILED": TestStatus.FAILED}


def _cut_file(name: str) -> str:
    """`name in tests/unit/x.tcl` -> `name`: a final whitespace, `in`, whitespace, word is cut."""
    end = len(name)
    while end and not name[end - 1].isspace():
        end -= 1
    word_start = end
    while end and name[end - 1].isspace():
        end -= 1
    if word_start == len(name) or end == word_start or name[end - 2:end] != "in":
        return name
    cut = end - 2
    while cut and name[cut - 1].isspace():
        cut -= 1
    return name[:cut] if cut < end - 2 else name


def parse_log_redis(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        found = split_status_word(raw.strip(), tuple(_REDIS_WORDS))
        if found is None:
            continue
        word, rest = found
        name = cut_duration(rest)
        if word == "[err]:":
            name = _cut_file(name)
        result[name] = _REDIS_WORDS[word]
    return result


def parse_log_jq(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        found = split_status_word(raw.strip(), tuple(_AUTOMAKE_WORDS))
        if found is not None:
            result[found[1]] = _AUTOMAKE_WORDS[found[0]]
    return result


def parse_log_doctest(log: str) -> TestStatusMap:
    start = log.find("<doctest")
    end = log.find("</doctest>", start) if start >= 0 else -1
    if end < 0:
        return {}
    try:
        root = ET.fromstring(log[start:end + len("</doctest>")])
    except ET.ParseError:
        return {}  # a report cut short (a crash, the output limit): its tests count as missing
    result: TestStatusMap = {}
    for case in root.iter("TestCase"):
        for subcase in case.iter("SubCase"):
            passed = all(expr.get("success") == "true" for expr in subcase.iter("Expression"))
            result[f"{case.get('name')} > {subcase.get('name')}"] = (
                TestStatus.PASSED if passed else TestStatus.FAILED)
    return result


def parse_log_micropython_test(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        line = raw.strip()
        for word, status in _MICROPYTHON_WORDS.items():
            if line.startswith(word) and len(line) > len(word) and line[len(word)].isspace():
                result[line[len(word):].lstrip()] = status
                break
    return result


def _gtest_line(line: str) -> tuple[TestStatus, str] | None:
    """Status and name of `... [  FAILED  ] Name, where GetParam() = 3 (0 ms)`, read as the
    reference reads it: the last bracket that fits, the name up to the last whitespace + `(`."""
    if not line.endswith(")"):
        return None
    paren = line.rfind("(", 0, len(line) - 1)
    while paren >= 1 and not line[paren - 1].isspace():
        paren = line.rfind("(", 0, paren)
    if paren < 1:
        return None
    name_end = paren - 1
    bracket = line.rfind("[", 0, name_end)
    while bracket >= 0:
        found = _GTEST_RESULT.match(line, bracket)
        if found is not None and found.end() <= name_end:
            return _GTEST_STATUS[found.group(1)], line[found.end():name_end]
        bracket = line.rfind("[", 0, bracket)
    return None


def parse_log_googletest(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        found = _gtest_line(raw.strip())
        if found is not None:
            result[found[1]] = found[0]
    return result
