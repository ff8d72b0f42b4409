"""Modules that must not import each other both ways (lazy imports inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[2] / "src"


def imports_of(module: str) -> set[str]:
    """Every issuebench module `module` imports, at the top or inside a function."""
    path = SRC / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = SRC / module.replace(".", "/") / "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("issuebench"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("issuebench"))
    return found


@pytest.mark.parametrize(("a", "b"), [
    ("issuebench.analysis.html", "issuebench.analysis.report"),
    ("issuebench.datasets", "issuebench.demo"),
])
def test_no_import_circle(a, b):
    assert not (b in imports_of(a) and a in imports_of(b)), f"{a} and {b} import each other"
