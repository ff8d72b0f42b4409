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


def test_modules_stay_under_400_lines_and_the_demo_sources_are_data():
    root = SRC.parent
    large = []
    for folder in ("src", "scripts", "benchmarks"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if len(path.read_text().splitlines()) > 400:
                large.append(rel)
    assert large == []
    # The demo projects' sources are files, one per source file of each commit, not strings in code.
    projects = root / "scripts" / "demo_projects"
    assert {p.name for p in projects.iterdir() if p.is_dir()} == {"textkit", "tinycalc", "spans"}
    assert (projects / "textkit" / "commits" / "0" / "src" / "textkit" / "case.py").is_file()


# Counted over the body only: a typer command's signature is its options, one per line.
MAX_FUNCTION_LINES = 50


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end of the function."""
    body = node.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return (body[-1].end_lineno or body[-1].lineno) - body[0].lineno + 1


def test_functions_stay_under_50_lines():
    root = SRC.parent
    long = []
    for path in sorted((SRC / "issuebench").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if "/data/" in rel:
            continue  # data/: files run inside the sandbox, not modules of the package
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and body_lines(node) > MAX_FUNCTION_LINES:
                long.append(f"{rel}:{node.lineno} {node.name} ({body_lines(node)} lines)")
    assert long == []
