"""Does a test patch change what the tests do, or only their comments?

A pull request that bumps a type checker drops `# type: ignore[...]` comments across the tests
(returns' mypy upgrades): the test files change, but no test can fail before the change and pass
after it, so validate rejects the task after building and running it. Such a test patch is told
apart from the diff alone, before any build, and the candidate's place goes to the next one.
"""

from __future__ import annotations

import io
import tokenize
from collections import Counter

from issuebench.patch import parse_patch


def changes_test_code(test_patch: str) -> bool:
    """False when every changed line of every Python file, comments and blank space left out,
    is the same before and after; any other file (a fixture, a YAML case) counts as a change."""
    for file in parse_patch(test_patch):
        if not file.path.endswith(".py"):
            return True
        removed: Counter[str] = Counter()
        added: Counter[str] = Counter()
        if file.is_binary or file.is_rename or not file.hunks:
            return True
        for line in (line for hunk in file.hunks for line in hunk.lines):
            if line[:1] in ("+", "-"):
                code = _code_of(line[1:])
                if code:
                    (added if line[0] == "+" else removed)[code] += 1
        if removed != added:
            return True
    return False


def _code_of(line: str) -> str:
    """The line's tokens without its comment; the whole line when it does not tokenize alone (a
    line inside a multi-line string), so that such a line always counts as changed code."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return line.strip()
    kept = [t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                                          tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)]
    return " ".join(kept)
