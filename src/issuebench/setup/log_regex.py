"""Regular expressions over untrusted output (test and build logs), in linear time.

A log is whatever the code under test printed: a progress bar's run of characters, a megabyte of
one letter. Python's `re` backtracks, and a pattern such as `[A-Za-z0-9][\\w.-]* was not found`
takes time quadratic in such a run (tqdm's test log stopped `collect` for good). Every pattern
setup and collect run over a log is compiled here, with RE2, whose matching time is linear in the
text whatever the pattern; RE2 has no lookarounds or backreferences, so a pattern that needs them
fails to compile here, in the tests, rather than hanging on a log.
"""

from __future__ import annotations

from typing import Any

import re2

# Every pattern compiled through this module, so a test can feed each of them hostile text.
COMPILED: list[Any] = []


def compile_log_pattern(pattern: str, *, multiline: bool = True) -> Any:
    """`pattern` compiled by RE2 (`^`/`$` at line ends unless `multiline` is false). The result
    has `search`, `match`, `finditer`, `findall` and `sub` as in `re`; each call encodes the whole
    text it is given, so search a slice rather than the whole log at many offsets."""
    compiled = re2.compile(f"(?m){pattern}" if multiline else pattern)
    COMPILED.append(compiled)
    return compiled
