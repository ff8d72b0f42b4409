"""Modules a repository provides itself, so a missing import of one is a path to set, not a
distribution to install."""

from __future__ import annotations

from issuebench.setup.facts import Facts
from issuebench.setup.requirements import requirement_name
from issuebench.setup.source import SourceTree


def local_top_modules(tree: SourceTree) -> set[str]:
    """Top-level modules the repository itself provides (at its root or under src/)."""
    out = set()
    for path in tree.files():
        parts = path.split("/")
        if parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        top = parts[0]
        if len(parts) > 1 or top.endswith(".py"):
            out.add(top.removesuffix(".py"))
    return out


def module_folders(tree: SourceTree, top: str) -> list[str]:
    """Folders below the root that hold module `top` (`D/top.py` or `D/top/__init__.py`).

    A Python 2 era suite imports its helpers as top-level modules (bottle's test/__init__.py:
    `from tools import chdir`, test/tools.py), which works when the runner's script sits in that
    folder; a distribution of that name on the registry is not what the tests mean.
    """
    found = set()
    for path in tree.files():
        folder, _, name = path.rpartition("/")
        if name == f"{top}.py" and folder:
            found.add(folder)
        elif name == "__init__.py" and folder.rpartition("/")[2] == top and "/" in folder:
            found.add(folder.rpartition("/")[0])
    return sorted(f for f in found if f != "src")


def declared_distributions(facts: Facts) -> set[str]:
    """Canonical names of every distribution the project declares: dependencies, extras, test needs.
    A missing import of one is that distribution, even where a folder of the repository has its name."""
    reqs = [*facts.install_requires, *facts.test_requires, *(r for rs in facts.extras.values() for r in rs)]
    return {name for name in map(requirement_name, reqs) if name}
