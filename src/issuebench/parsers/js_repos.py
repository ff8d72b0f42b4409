"""The reference harness's per-repository JavaScript parsers (SWE-bench Multimodal).

- wp-calypso: jest `--verbose` as `npm run test-client` prints it. Only the text after each
  ` ./node_modules/.bin/jest ` (the script line npm echoes) is read, and each such part stops at
  the first failure report (`  ● `) or the `Test Suites` summary. Every indented line that is not
  a test opens a block (the blocks of the same or deeper indent are closed first), and the id is
  the blocks and the title joined with ` - `, without jest 23's `(12ms)`.
- Chart.js: karma's progress reporter in Chrome, one `Chrome <version> (<os>) <full name> FAILED`
  line per failing spec, colours stripped; the id keeps the space before `FAILED`. Only
  failures are recorded: these rows are `fail_only`.
- marked: jasmine without colours, `1) full name` per failure (its pending list is numbered the
  same way and counts as failed, as in the reference); `fail_only`.
- p5.js: mocha's spec reporter (run by grunt in a browser). JSON and XML blocks the tests print
  are dropped first; then each `N) block\n   sub-block\n     title:` failure report whose lines
  are indented ever deeper becomes the id `block:sub-block:title`; `fail_only`.
- react-pdf: jest without `--verbose`, one `PASS path (1.2 s)` / `FAIL path` line per test file;
  the id is the path.
"""

from __future__ import annotations

import bisect
import re

from issuebench.models import TestStatus, TestStatusMap
from issuebench.parsers.text import leading_space, strip_ansi

_CALYPSO_SPLIT = " ./node_modules/.bin/jest "
_CALYPSO_MARKS = {"✓": TestStatus.PASSED, "✕": TestStatus.FAILED}
_JEST23_MS = re.compile(r"\(\d+ms\)")
_KARMA_FAILED = "FAILED"
_CLOSE_PAREN_SPACE = re.compile(r"\)[^\S\r\n]")
_VERSION = re.compile(r"[\d.]+")
_NUMBERED = re.compile(r"\d+\)")
_P5_FAILURE = re.compile(r"^[^\S\n]*\d+\)", re.MULTILINE)
_P5_WINDOW = 1000  # the reference looks this far for the `:` ending a failure's name
_XML_OPEN = re.compile(r"<(\w+)>")
_XML_CLOSE = re.compile(r"</(\w+)>")
_FILE_TIMINGS = (re.compile(r"[\d.]+ms\)"), re.compile(r"[\d.]+\ss\)"), re.compile(r"[\d.]+s\)"))


def _calypso_test(line: str, indent: int) -> tuple[TestStatus, str] | None:
    """(status, title) of an indented `✓ title (12ms)` line; None for a line the reference rejects."""
    mark = line[indent]
    if indent == 0 or len(line) < indent + 2 or not line[indent + 1].isspace():
        return None
    title = line[indent + 2:]
    if _JEST23_MS.search(line):
        opening = title.rfind("(")
        if opening < 0 or not _JEST23_MS.fullmatch(title, opening):
            return None
        title = title[:opening]
    return _CALYPSO_MARKS[mark], title


def parse_log_calypso(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for part in log.split(_CALYPSO_SPLIT)[1:]:
        blocks: list[tuple[str, int]] = []
        for line in part.split("\n"):
            if line.startswith(("Test Suites", "  ● ")):
                break
            indent = leading_space(line)
            if indent < len(line) and line[indent] in _CALYPSO_MARKS:
                test = _calypso_test(line, indent)
                if test is not None:
                    status, title = test
                    prefix = " - ".join(name for name, _ in blocks)
                    result[f"{prefix} - {title}".strip()] = status
            elif indent > 0:
                while blocks and blocks[-1][1] >= indent:
                    blocks.pop()
                blocks.append((line.strip(), indent))
    return result


def _chrome_failure(line: str) -> str | None:
    """The name in `... Chrome 120.0 (Linux x86_64) <name>FAILED`, read as the reference does."""
    if not line.endswith(_KARMA_FAILED):
        return None
    limit = len(line) - len(_KARMA_FAILED)
    start = 0
    cached: int | None = None  # the last `) ` found; reused while it lies past the search start
    while (at := line.find("Chrome", start)) >= 0:
        start = at + 1
        pos = at + len("Chrome")
        if pos >= len(line) or not line[pos].isspace():
            continue
        version = _VERSION.match(line, pos + 1)
        if version is None:
            continue
        pos = version.end()
        if pos + 1 >= len(line) or line[pos] in "\r\n" or not line[pos].isspace() or line[pos + 1] != "(":
            continue
        search_from = pos + 3  # at least one character inside the parentheses
        if cached is None or cached < search_from:
            found = _CLOSE_PAREN_SPACE.search(line, search_from)
            if found is None:
                return None
            cached = found.start()
        if cached + 2 <= limit:
            return line[cached + 2:limit]
    return None


def parse_log_chart_js(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for line in strip_ansi(log).split("\n"):
        name = _chrome_failure(line)
        if name is not None:
            result[name] = TestStatus.FAILED
    return result


def parse_log_marked(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for line in log.split("\n"):
        number = _NUMBERED.match(line)
        if number is not None and number.end() < len(line) and line[number.end()].isspace():
            result[line[number.end() + 1:].strip()] = TestStatus.FAILED
    return result


def _drop_json_blocks(log: str) -> str:
    """Lines inside `{ ... }` / `[ ... ]` blocks and one-line objects or arrays are dropped."""
    kept = []
    in_object = in_array = False
    for line in log.split("\n"):
        bare = line.rstrip()
        if bare.endswith("{"):
            in_object = True
        elif bare.endswith("["):
            in_array = True
        elif bare == "}" and in_object:
            in_object = False
        elif bare == "]" and in_array:
            in_array = False
        elif not (in_object or in_array or (bare.startswith("{") and bare.endswith("}"))
                  or (bare.startswith("[") and bare.endswith("]"))):
            kept.append(line)
    return "\n".join(kept)


def _drop_xml_blocks(text: str) -> str:
    """Each `<tag> ... </tag>` (to the first closing tag) is cut, leftmost first, as the reference
    does; the opening tags of the same name inside it, less one, are put back in its place."""
    closings: dict[str, list[int]] = {}
    for match in _XML_CLOSE.finditer(text):
        closings.setdefault(match.group(1), []).append(match.start())

    def first_closing(tag: str, after: int) -> int | None:
        positions = closings.get(tag, [])
        at = bisect.bisect_left(positions, after)
        return positions[at] if at < len(positions) else None

    out: list[str] = []
    pos = 0
    carried: tuple[str, int] | None = None  # opening tags put back at `pos`: (tag, how many)
    openings = _XML_OPEN.finditer(text)
    while True:
        if carried is not None:
            tag, count = carried
            closing = first_closing(tag, pos)
            if closing is not None:
                end = closing + len(tag) + 3
                count += text.count(f"<{tag}>", pos, end) - 1
                carried = (tag, count) if count > 0 else None
                pos = end
                continue
            out.append(f"<{tag}>" * count)
            carried = None
        for opening in openings:
            if opening.start() < pos:
                continue
            tag = opening.group(1)
            closing = first_closing(tag, opening.end())
            if closing is not None:
                end = closing + len(tag) + 3
                out.append(text[pos:opening.start()])
                count = text.count(f"<{tag}>", opening.start(), end) - 1
                carried = (tag, count) if count > 0 else None
                pos = end
                break
        else:
            out.append(text[pos:])
            return "".join(out)


def _deeper_each_line(lines: list[str]) -> bool:
    previous = 0
    for line in lines:
        indent = leading_space(line)
        if indent <= previous:
            return False
        previous = indent
    return True


def parse_log_p5js(log: str) -> TestStatusMap:
    text = _drop_xml_blocks(_drop_json_blocks(strip_ansi(log)))
    result: TestStatusMap = {}
    pos = 0
    while (match := _P5_FAILURE.search(text, pos)) is not None:
        colon = text.find(":", match.end(), match.end() + _P5_WINDOW + 1)
        if colon < 0:
            pos = match.start() + 1
            continue
        lines = text[match.end():colon].split("\n")
        if _deeper_each_line(lines):
            result[":".join(line.strip() for line in lines)] = TestStatus.FAILED
        pos = colon + 1
    return result


def _file_name(rest: str) -> str:
    """`path (1.2 s)` -> `path`: the last timing of the first form found is cut, with what follows."""
    for timing in _FILE_TIMINGS:
        opening = rest.rfind("(")
        while opening >= 1:
            if rest[opening - 1].isspace() and timing.match(rest, opening + 1):
                return rest[:opening - 1]
            opening = rest.rfind("(", 0, opening)
    return rest


def parse_log_react_pdf(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for line in log.split("\n"):
        for word, status in (("PASS", TestStatus.PASSED), ("FAIL", TestStatus.FAILED)):
            if line.startswith(word) and len(line) > len(word) and line[len(word)].isspace():
                result[_file_name(line[len(word) + 1:])] = status
                break
    return result
