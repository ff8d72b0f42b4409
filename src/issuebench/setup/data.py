"""The setup package's data tables (TOML files beside this module), loaded once."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DATA_DIR = Path(__file__).parent / "data"


@functools.cache
def load(name: str) -> dict[str, Any]:
    """Load data/<name>.toml."""
    with (DATA_DIR / f"{name}.toml").open("rb") as handle:
        return tomllib.load(handle)


def import_to_distribution(module: str) -> str:
    """The distribution that provides top-level import `module` (its own name when unknown)."""
    top = module.split(".")[0]
    return load("import_names")["imports"].get(top, top.replace("_", "-"))


def is_ignored_tool(name: str) -> bool:
    """True for development tools that running tests never needs (linters, docs, release)."""
    table = load("ignore")["ignore"]
    key = canonical_name(name)
    return key in {canonical_name(n) for n in table["names"]} or any(
        key.startswith(prefix) for prefix in table["prefixes"])


def canonical_name(name: str) -> str:
    """PEP 503 normalisation: case-folded, runs of -_. become one dash."""
    out = []
    for char in name.strip().lower():
        if char in "-_.":
            if not out or out[-1] != "-":
                out.append("-")
        else:
            out.append(char)
    return "".join(out)
