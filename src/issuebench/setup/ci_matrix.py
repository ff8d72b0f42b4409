"""A CI job's matrix, for a path it completes: `pip install -r test_requirements/${{
matrix.requirements-file }}` (django-cms) installs one file per matrix entry, and which one the
command means is only known from the job's matrix."""

from __future__ import annotations

import itertools
import re
from typing import Any

from issuebench.setup.requirements import unquote
from issuebench.setup.source import SourceTree

_EXPRESSION = re.compile(r"(\$\{\{[^}]*\}\})")
_MATRIX_NAME = re.compile(r"^\$\{\{\s*matrix\.([\w-]+)\s*\}\}$")
_INCLUDED_PATH = re.compile(r"(?:^|\s)(?:-r|--requirement)\s+(\S*\$\{\{[^}]*\}\}\S*)")


def matrix_values(node: Any, found: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Every list of plain values under a `matrix:` of the workflow, by name, in their order."""
    found = {} if found is None else found
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "matrix" and isinstance(value, dict):
                for name, values in value.items():
                    if isinstance(values, list) and values and all(isinstance(v, (str, int, float)) for v in values):
                        found.setdefault(str(name), [str(v) for v in values])
            matrix_values(value, found)
    elif isinstance(node, list):
        for item in node:
            matrix_values(item, found)
    return found


def matrix_requirement_files(words: str, tree: SourceTree, matrix: dict[str, list[str]]) -> list[str]:
    """The files of the repository that the `-r` paths with matrix expressions in `words` name:
    with the matrix's values in their order, the first that exists (none when the path uses
    another expression, whose value is unknown here)."""
    found: list[str] = []
    files = set(tree.files())
    for path in _INCLUDED_PATH.findall(words):
        parts = _EXPRESSION.split(unquote(path))
        names = [_MATRIX_NAME.match(p) for p in parts[1::2]]
        if all(n and n.group(1) in matrix for n in names):
            choices = itertools.product(*(matrix[n.group(1)] for n in names if n))
            candidates = ["".join(_filled(parts, values)) for values in choices]
            found += [c for c in candidates if c in files][:1]
    return found


def _filled(parts: list[str], values: tuple[str, ...]) -> list[str]:
    filled = list(parts)
    filled[1::2] = values
    return filled
