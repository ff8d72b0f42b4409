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
    """The distribution that provides import `module` (its top-level name when unknown).

    A dotted import is looked up whole, then by namespace (`sphinxcontrib.X` comes from
    sphinxcontrib-X, not from a distribution named sphinxcontrib), then by its top level.
    """
    table = load("import_names")
    parts = module.split(".")
    for length in range(len(parts), 1, -1):
        dotted = ".".join(parts[:length])
        if dotted in table["imports"]:
            return table["imports"][dotted]
    pattern = table.get("namespaces", {}).get(parts[0])
    if pattern is not None and len(parts) > 1:
        return pattern.replace("{sub}", parts[1])
    return table["imports"].get(parts[0], parts[0].replace("_", "-"))


def is_ignored_tool(name: str) -> bool:
    """True for development tools that running tests never needs (linters, docs, release)."""
    table = load("ignore")["ignore"]
    key = canonical_name(name)
    return key in {canonical_name(n) for n in table["names"]} or any(
        key.startswith(prefix) for prefix in table["prefixes"])


def needs_gpu(name: str) -> bool:
    """True for packages that run only on a GPU (see ignore.toml's [gpu])."""
    table = load("ignore")["gpu"]
    key = canonical_name(name)
    return key in table["names"] or any(key.startswith(prefix) for prefix in table["prefixes"])


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
