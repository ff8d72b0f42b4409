"""An issue written from the failing tests: what was called, what happened, a trimmed traceback.

Only the tests' own frames keep their code; frames in the files the bug changed keep their file and
function name but lose their line number and code, so the text never points at the changed line.
"""

from __future__ import annotations

import re
from typing import Any

from issuebench.patch import is_test_path
from issuebench.synth.generators.model_rewrite import reply_text

_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
_FRAME = re.compile(r"^(\S+?\.py):(\d+): in (\S+)$")
_SECTION_END = re.compile(r"^(={3,}|-{3,} Captured)")
MAX_TESTS_LISTED = 10


def failure_sections(output: str) -> dict[str, list[str]]:
    """pytest's --tb=short failure blocks, keyed by the header's test name."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        header = _HEADER.match(line)
        if header:
            current = sections.setdefault(header.group(1), [])
            continue
        if current is not None and _SECTION_END.match(line):
            current = None
            continue
        if current is not None:
            current.append(line)
    return sections


def _header_for(test_id: str) -> str:
    """pytest names a failure block `Class.test[param]` for node id `path::Class::test[param]`."""
    return ".".join(test_id.split("::")[1:]) or test_id


def trim(block: list[str], changed: set[str]) -> tuple[list[str], list[str], list[str]]:
    """(called: the test's last code lines, happened: the E lines, traceback: frames kept)."""

    called: list[str] = []
    happened: list[str] = []
    trace: list[str] = []
    hide = in_test = False
    for line in block:
        frame = _FRAME.match(line)
        if frame:
            path, _line, func = frame.groups()
            outside = path.startswith(("/", "<")) or "site-packages" in path
            if outside:  # the interpreter's or installed packages' frames: noise, and machine paths
                hide, in_test = True, False
                continue
            hide = any(path.endswith(c) or c.endswith(path) for c in changed)
            in_test = not hide and is_test_path(path)
            if in_test:
                called = []  # the innermost test frame says what the test called
            trace.append(f"{path}: in {func}" if hide else line)
        elif line.startswith("E "):
            happened.append(line[1:].strip())
        elif not hide and line.strip():
            trace.append(line)
            if in_test:
                called.append(line.strip())
    return called[-3:], happened[:12], collapse(trace)[-30:]


def collapse(lines: list[str]) -> list[str]:
    """Runs of the same line (deep recursion) become one line and a count."""
    out: list[str] = []
    count = 0
    for i, line in enumerate(lines):
        count += 1
        if i + 1 < len(lines) and lines[i + 1] == line:
            continue
        out.append(line if count == 1 else f"{line}  (x{count})")
        count = 0
    return out


def write_issue(f2p: list[str], output: str, changed: set[str]) -> str:
    """The problem statement for a kept candidate."""
    sections = failure_sections(output)
    first = f2p[0]
    files = sorted({t.split("::")[0] for t in f2p})
    lines = [f"{len(f2p)} test(s) in {', '.join(f'`{f}`' for f in files[:3])} fail"
             + (" after the latest changes." if len(f2p) > 1 else "."), ""]
    block = sections.get(_header_for(first))
    if block is None:  # the test module did not even import: pytest reports the collection error
        block = next((b for name, b in sections.items()
                      if name.startswith("ERROR collecting") and name.endswith(first.split("::")[0])), None)
    if block is None:  # collection errors and crashes have no per-test block
        lines += [f"Running `{first}` fails, but no traceback was printed for it."]
    else:
        called, happened, trace = trim(block, changed)
        if called:
            lines += [f"`{first}` calls:", "", "```python", *called, "```", ""]
        if happened:
            lines += ["What happens:", "", "```", *happened, "```", ""]
        lines += ["It is expected to pass (it did before). Trimmed traceback:", "", "```", *trace, "```"]
    others = f2p[1:]
    if others:
        shown = ", ".join(f"`{t}`" for t in others[:MAX_TESTS_LISTED])
        more = f" and {len(others) - MAX_TESTS_LISTED} more" if len(others) > MAX_TESTS_LISTED else ""
        lines += ["", f"Also failing: {shown}{more}."]
    return "\n".join(lines).strip() + "\n"


def model_issue(client: Any, f2p: list[str], output: str, changed: set[str]) -> str | None:
    """Let a configured model reword the issue; the failing tests are its only evidence."""

    draft = write_issue(f2p, output, changed)
    prompt = ("Rewrite this bug report as a user of the library would file it on GitHub: what they "
              "called, what they expected, what happened. Do not guess where the bug is.\n\n" + draft)
    try:
        text = reply_text(client.query([{"role": "user", "content": prompt}])).strip()
    except Exception:  # a failed call falls back to the written text
        return None
    return text or None
