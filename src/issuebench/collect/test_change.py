"""Does a test patch change what the tests do, or only their comments?

A pull request that bumps a type checker drops `# type: ignore[...]` comments across the tests
(returns' mypy upgrades): the test files change, but no test can fail before the change and pass
after it, so validate rejects the task after building and running it. Such a test patch is told
apart from the diff alone, before any build, and the candidate's place goes to the next one.
"""

from __future__ import annotations

import io
import tokenize

from issuebench.patch import PatchParseError, parse_patch


def changes_test_code(test_patch: str) -> bool:
    """False when, in every hunk of every Python file, the changed lines read the same before and
    after once comments and blank lines are left out (indentation and order kept: moving an assert
    out of a `with` block is a change); any other file (a fixture, a YAML case) counts as a change."""
    try:
        files = parse_patch(test_patch)
    except PatchParseError:
        return True   # not read as a diff here: left to validate, which applies it with git
    for file in files:
        if not file.path.endswith(".py") or file.is_binary or file.is_rename or not file.hunks:
            return True
        for hunk in file.hunks:
            removed = [code for line in hunk.lines if line.startswith("-") and (code := _code_of(line[1:]))]
            added = [code for line in hunk.lines if line.startswith("+") and (code := _code_of(line[1:]))]
            if removed != added:
                return True
    return False


def _code_of(line: str) -> str:
    """The line's indentation and tokens without its comment ("" for a comment or a blank line);
    the whole line when it does not tokenize alone (a line inside a multi-line string), so that
    such a line always counts as changed code."""
    body = line.strip()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(body + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return line
    kept = [t.string for t in tokens if t.type not in _LAYOUT]
    return f"{len(line) - len(line.lstrip())}:{' '.join(kept)}" if kept else ""


_LAYOUT = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                     tokenize.ENDMARKER})
