"""Line helpers shared by the non-Python parsers.

Logs are untrusted and can be megabytes long, so these helpers scan with string methods and use
regular expressions only on short, anchored pieces whose quantifiers cannot overlap (no `.*X.*`,
no two adjacent quantifiers that can take the same characters).
"""

from __future__ import annotations

import re

# ANSI escape sequences: ESC + one Fe byte, or a CSI with parameter, intermediate and final bytes.
# The three byte classes are disjoint, so the match is linear.
ANSI_ESCAPE = re.compile(r"\x1b(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")

# The duration jest (and redis's runner) print after a name: `12 ms`, `3ms`, `1 s`.
_DURATION = re.compile(r"\d+\s*m?s")


def strip_ansi(text: str) -> str:
    return ANSI_ESCAPE.sub("", text)


def leading_space(line: str) -> int:
    """How many whitespace characters the line starts with."""
    return len(line) - len(line.lstrip())


def cut_duration(name: str) -> str:
    """`should work (12 ms)` -> `should work`: one final whitespace + `(<duration>)` is cut.

    The name left must keep at least one character; otherwise nothing is cut.
    """
    if not name.endswith(")"):
        return name
    opening = name.rfind("(")  # a duration holds no "(", so its "(" is the last one
    if opening >= 2 and name[opening - 1].isspace() and _DURATION.fullmatch(name, opening + 1, len(name) - 1):
        return name[:opening - 1]
    return name


def cut_bare_duration(name: str) -> str:
    """`effect 12ms` / `effect 3` / `effect [skipped]` -> `effect` (vitest's verbose reporter).

    The tail is whitespace + digits + optional whitespace + optional `m` + optional `s`, or
    whitespace + `[skipped]`; the name left keeps at least one character.
    """
    if name.endswith("[skipped]"):
        cut = len(name) - len("[skipped]")
        return name[:cut - 1] if cut >= 2 and name[cut - 1].isspace() else name
    end = len(name)
    if end and name[end - 1] == "s":
        end -= 1
    if end and name[end - 1] == "m":
        end -= 1
    while end and name[end - 1].isspace():
        end -= 1
    digits_end = end
    while end and name[end - 1].isdecimal():
        end -= 1
    if end == digits_end or end < 2 or not name[end - 1].isspace():
        return name
    return name[:end - 1]


def split_status_word(line: str, words: tuple[str, ...]) -> tuple[str, str] | None:
    """(word, rest) when `line` starts with one of `words` followed by whitespace and more text."""
    for word in words:
        if line.startswith(word) and len(line) > len(word) + 1 and line[len(word)].isspace():
            return word, line[len(word) + 1:]
    return None
