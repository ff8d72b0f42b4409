"""pytest `-rA` short-summary parsers and the per-repository variants of the reference harness.

With `-rA`, pytest ends its output with one line per test: `STATUS test_id` (FAILED and ERROR
lines may add ` - message`). The reference's variants:

- `parse_log_pytest`: the first token after the status is the id.
- `parse_log_pytest_options`: like pytest, but a parametrize value that looks like an absolute
  path (`test_x[/tmp/abc/file.txt]`) is cut to its last component (`test_x[/file.txt]`), so ids
  do not depend on the machine's temporary directories.
- `parse_log_pytest_v2`: strips ANSI colour codes and control characters, and also reads the
  verbose progress form `test_id STATUS` that older pytest prints. In `keep_spaces` form
  (the newer reference) the id keeps everything after the status, so ids with spaces survive.
- `parse_log_matplotlib`: pytest, after renaming `MouseButton.LEFT/RIGHT` to `1/3` (ids differ
  across matplotlib versions otherwise).
- `parse_log_seaborn`: FAILED summary lines plus `test_id PASSED` / `PASSED test_id` lines.

Later lines win when an id appears twice, as in the reference.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from issuebench.models import TestStatus, TestStatusMap
from issuebench.parsers.text import strip_ansi

_STATUS_BY_WORD = {status.value: status for status in TestStatus}
# pytest's `SKIPPED [3] path:line: reason` summary line names a count, not a test.
_SKIP_COUNT = re.compile(r"^\[\d+\]$")
_ANSI_CODE = re.compile(r"\[(\d+)m")
_CONTROL_CHARS = str.maketrans("", "", "".join(chr(code) for code in range(1, 32)))


def _starts_with_status(line: str) -> bool:
    return line.startswith(tuple(_STATUS_BY_WORD))


def _without_decoration(tokens: list[str]) -> list[str]:
    """`PASSED 😃 path::test` -> `PASSED path::test`.

    A plugin that dresses the status words (pytest-emoji, which a project's addopts may switch
    on) puts a symbol between the word and the id; no id is made of symbols alone (an id has a
    letter, a digit or a path's punctuation), so such a token after the word is dropped."""
    if len(tokens) > 2 and not any(ch.isalnum() or ch in "/._:[]-" for ch in tokens[1]):
        return [tokens[0], *tokens[2:]]
    return tokens


def _summary_line(line: str) -> tuple[TestStatus, list[str]] | None:
    """(status, tokens after the status) for a `STATUS id ...` line, else None."""
    if not _starts_with_status(line):
        return None
    if line.startswith(TestStatus.FAILED.value):
        # `FAILED id - message`: drop the separator so the message cannot glue onto the id.
        line = line.replace(" - ", " ")
    tokens = _without_decoration(line.split())
    status = _STATUS_BY_WORD.get(tokens[0]) if tokens else None
    # A line such as `ERROR: pip could not ...` starts with a status word but is not a result.
    if status is None or len(tokens) < 2:
        return None
    if status is TestStatus.SKIPPED and _SKIP_COUNT.match(tokens[1]):
        return None
    return status, tokens[1:]


def _parse_summary(log: str, test_id: Callable[[str], str] = lambda raw: raw) -> TestStatusMap:
    """Every `STATUS id` line; `test_id` maps the raw id to the one recorded.

    A project whose configuration forces colour (`addopts = --color=yes`) writes each status and
    id inside ANSI codes (`ESC[32mPASSED ESC[0m path::ESC[1mtest ESC[0m`); the codes are taken
    out first, or no line would read as a result (the reference reads nothing of such a log)."""
    if "\x1b" in log:
        log = strip_ansi(log)
    result: TestStatusMap = {}
    for line in log.split("\n"):
        entry = _summary_line(line)
        if entry is not None:
            status, rest = entry
            result[test_id(rest[0])] = status
    return result


def parse_log_pytest(log: str) -> TestStatusMap:
    return _parse_summary(log)


def shorten_path_option(test_id: str) -> str:
    """`test_x[/a/b/c.txt]` -> `test_x[/c.txt]`; `//`-prefixed and glob values stay as they are."""
    # `(.*?)\[(.*)\]` by hand: the main part up to the first `[`, the option up to the last `]`
    # (the pattern itself backtracks quadratically over a long id without a closing bracket).
    start, end = test_id.find("["), test_id.rfind("]")
    if start < 0 or end < start:
        return test_id
    main, option = test_id[:start], test_id[start + 1:end]
    if option.startswith("/") and not option.startswith("//") and "*" not in option:
        option = "/" + option.split("/")[-1]
    return f"{main}[{option}]"


def parse_log_pytest_options(log: str) -> TestStatusMap:
    return _parse_summary(log, shorten_path_option)


def _clean_colours(line: str) -> str:
    return _ANSI_CODE.sub("", line).translate(_CONTROL_CHARS)


def _parse_v2(log: str, *, keep_spaces: bool) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        line = _clean_colours(raw)
        if _starts_with_status(line):
            if keep_spaces and line.startswith(TestStatus.FAILED.value):
                line = line.split(" - ", 1)[0]
            elif line.startswith(TestStatus.FAILED.value):
                line = line.replace(" - ", " ")
            tokens = _without_decoration(line.split())
            status = _STATUS_BY_WORD.get(tokens[0]) if tokens else None
            if status is None or len(tokens) < 2:
                continue
            if status is TestStatus.SKIPPED and _SKIP_COUNT.match(tokens[1]):
                continue
            result[" ".join(tokens[1:]) if keep_spaces else tokens[1]] = status
        elif line.endswith(tuple(_STATUS_BY_WORD)):
            # Older pytest's verbose progress line: `test_id STATUS`.
            tokens = line.split()
            status = _STATUS_BY_WORD.get(tokens[-1]) if tokens else None
            if status is None or len(tokens) < 2:
                continue
            result[" ".join(tokens[:-1]) if keep_spaces else tokens[0]] = status
    return result


def parse_log_pytest_v2(log: str) -> TestStatusMap:
    """The newer reference form: ids keep their spaces, colour codes are stripped."""
    return _parse_v2(log, keep_spaces=True)


def parse_log_pytest_v2_legacy(log: str) -> TestStatusMap:
    """The reference form up to swebench 4.x: the id is the first token only."""
    return _parse_v2(log, keep_spaces=False)


def parse_log_matplotlib(log: str) -> TestStatusMap:
    renamed = log.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3")
    return parse_log_pytest(renamed)


def parse_log_seaborn(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for line in log.split("\n"):
        tokens = line.split()
        if len(tokens) < 2:
            continue
        if line.startswith(TestStatus.FAILED.value):
            result[tokens[1]] = TestStatus.FAILED
        elif f" {TestStatus.PASSED.value} " in line:
            if tokens[1] == TestStatus.PASSED.value:
                result[tokens[0]] = TestStatus.PASSED
        elif line.startswith(TestStatus.PASSED.value):
            result[tokens[1]] = TestStatus.PASSED
    return result
