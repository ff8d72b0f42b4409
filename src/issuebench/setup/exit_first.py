"""A pytest configuration that stops at the first failure, which hides the rest of every run.

transitions' pytest.ini has `addopts = -x`: one test module that cannot import (its code-style test
wants pycodestyle) ends the whole-suite run before any test, so setup judges nothing; and a graded
run stops at the first failing test, so the PASS_TO_PASS tests after it never report. The tests run
with `--maxfail=0` (pytest's own default, no limit), which a later option wins over addopts with.
"""

from __future__ import annotations

import shlex

from issuebench.setup.config_files import pytest_addopts
from issuebench.setup.source import SourceTree

NO_MAXFAIL = "--maxfail=0"
# Short options that take a value: what follows them in a cluster (`-rxs`) is that value.
_SHORT_WITH_VALUE = set("rkmpcoWn")


def stops_at_first_failure(tree: SourceTree) -> str | None:
    """Where the configuration's addopts stop pytest early (`-x`, `--exitfirst`, `--maxfail`), or None."""
    for path, value in pytest_addopts(tree):
        try:
            words = shlex.split(value)
        except ValueError:
            words = value.split()
        if any(_stops(word) for word in words):
            return f"{path}'s addopts ({value.strip()[:80]})"
    return None


def _stops(word: str) -> bool:
    if word in ("--exitfirst",) or word.startswith("--maxfail"):
        return True
    if not word.startswith("-") or word.startswith("--"):
        return False
    for letter in word[1:]:
        if letter == "x":
            return True
        if letter in _SHORT_WITH_VALUE:
            return False
    return False
