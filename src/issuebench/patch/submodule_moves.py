"""A patch's submodule moves: the sections that change a gitlink's commit and nothing else.

A pull request that updates its test data submodule (tinycss2's css-parsing-tests) carries
`-Subproject commit OLD` / `+Subproject commit NEW`, which no patch tool can apply to a folder of
plain files. The harness applies the rest and fills the folder again at NEW from a clone
(harness/submodules.py).
"""

from __future__ import annotations

import re

from issuebench.patch.parse import FilePatch, parse_patch

_NEW_COMMIT = re.compile(r"^\+Subproject commit ([0-9a-f]{40})\s*$")


def submodule_moves(text: str | None) -> tuple[str, dict[str, str]]:
    """(the patch without its submodule moves, {submodule path: the commit it moves to})."""
    rest: list[str] = []
    moves: dict[str, str] = {}
    for fp in parse_patch(text):
        commit = _moved_to(fp)
        if commit:
            moves[fp.path] = commit
        else:
            rest.append(fp.text)
    return "".join(rest), moves


def _moved_to(fp: FilePatch) -> str | None:
    lines = [line for hunk in fp.hunks for line in hunk.lines]
    if not lines or not all(line.startswith(("+Subproject commit ", "-Subproject commit ")) for line in lines):
        return None
    found = [m.group(1) for m in map(_NEW_COMMIT.match, lines) if m]
    return found[0] if len(found) == 1 else None
