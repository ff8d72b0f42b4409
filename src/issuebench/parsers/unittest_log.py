"""Plain `python -m unittest -v` output, before and after Python 3.11.

Test ids are `module.Class.test_name`: the same on every Python version, and exactly what
`python -m unittest module.Class.test_name` accepts, so an id from a dataset can be run as it is.

Forms understood:
- `test_x (mod.Class) ... ok` (before 3.11) and `test_x (mod.Class.test_x) ... ok` (3.11+);
- a docstring's first line on the next line: `test_x (mod.Class)` then `Docstring. ... ok`;
- verdicts `ok`, `FAIL`, `ERROR`, `skipped 'reason'`, `expected failure` (XFAIL) and
  `unexpected success` (FAILED: the test was expected to fail and did not);
- output the test printed between `...` and the verdict, on the same line (`... hellook`) or on
  earlier lines (the verdict then stands alone on its own line);
- a test whose subtests failed prints no verdict (before 3.11 the next test follows on the same
  line); 3.11+ prints indented `test_x (mod.Class.test_x) (i=1) ... FAIL` lines;
- the failure section's `FAIL: ...`, `ERROR: ...` and `UNEXPECTED SUCCESS: ...` headers, which
  win over an earlier verdict (a subtest failure is a failure of its test).
"""

from __future__ import annotations

import re

from issuebench.models import TestStatus, TestStatusMap

_HEADER = re.compile(r"(?P<name>[^\s()]+) \((?P<where>[\w.]+)\)")
_SECTION = re.compile(r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): " + _HEADER.pattern)
_VERDICT_WORDS = (
    ("expected failure", TestStatus.XFAIL),
    ("unexpected success", TestStatus.FAILED),
    ("ok", TestStatus.PASSED),
    ("FAIL", TestStatus.FAILED),
    ("ERROR", TestStatus.ERROR),
)
_SKIPPED = re.compile(r"skipped(?: '.*'| \".*\")?$")
_SECTION_STATUS = {"FAIL": TestStatus.FAILED, "ERROR": TestStatus.ERROR,
                   "UNEXPECTED SUCCESS": TestStatus.FAILED}


def unittest_id(name: str, where: str) -> str:
    """`mod.Class.test_x` from the name and the parenthesised part of either Python's form."""
    return where if where.endswith("." + name) else f"{where}.{name}"


def _verdict(text: str, *, exact: bool) -> TestStatus | None:
    """The verdict `text` is (exact) or ends with (output the test printed may precede it)."""
    skipped = _SKIPPED.search(text)
    if skipped is not None and (skipped.start() == 0 or not exact):
        return TestStatus.SKIPPED
    for word, status in _VERDICT_WORDS:
        if text == word or (not exact and text.endswith(word)):
            return status
    return None


# A line longer than this is output a test printed, never a header or a verdict worth reading:
# chains of headers on one line are read link by link, which is quadratic in the line's length.
_MAX_LINE = 20_000


def parse_log_unittest(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    pending: str | None = None  # the test whose verdict has not been printed yet
    for raw in log.split("\n"):
        line = raw.strip()
        if len(line) > _MAX_LINE:
            continue
        section = _SECTION.match(line)
        if section:
            result[unittest_id(section["name"], section["where"])] = _SECTION_STATUS[section["kind"]]
            pending = None
            continue
        header = _HEADER.match(line)
        if header is None:
            if pending is None:
                continue
            if " ... " in line:
                # `Docstring line ... ok`, or a test's output followed by its verdict.
                verdict = _verdict(line.rsplit(" ... ", 1)[1].strip(), exact=False)
            else:
                # A verdict alone on its line, after output the test printed. Other lines are
                # that output and say nothing.
                verdict = _verdict(line, exact=True)
            if verdict is not None:
                result[pending] = verdict
                pending = None
            continue
        pending = _read_header_line(line, result)
        # A verdict glued to printed output (`... hellook`) is tentative: `... look` then `FAIL`
        # on a later line is printed output followed by the real verdict, which then wins.
    return result


def _read_header_line(line: str, result: TestStatusMap) -> str | None:
    """Record the verdicts on a line that starts with a test header; return the test still open.

    Before 3.11 a test whose subtests failed gets no verdict and the next header follows on the
    same line (`test_a (m.C) ... test_b (m.C) ... ok`), so headers are read as a chain.
    """
    rest = line
    while True:
        header = _HEADER.match(rest)
        if header is None:
            return None
        test_id = unittest_id(header["name"], header["where"])
        after = rest[header.end():]
        if after.startswith(" (") and " ... " in after:
            # 3.11+ subtest line: `test_x (mod.Class.test_x) (i=1) ... FAIL`.
            verdict = _verdict(after.split(" ... ", 1)[1].strip(), exact=False)
            if verdict in (TestStatus.FAILED, TestStatus.ERROR):
                result[test_id] = verdict
            return None
        if " ... " not in after:
            return test_id  # the docstring line (or the verdict) follows
        rest = after.split(" ... ", 1)[1].strip()
        if _HEADER.match(rest):
            continue
        if not rest:
            return test_id
        verdict = _verdict(rest, exact=True)
        if verdict is not None:
            result[test_id] = verdict
            return None
        glued = _verdict(rest, exact=False)
        if glued is not None:
            result[test_id] = glued
        return test_id
