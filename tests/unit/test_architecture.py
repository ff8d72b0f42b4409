"""The house rules, read from the source: layers import one way, packages meet at their faces,
imports sit at the top, functions stay short. Every import counts, including those inside
functions and under TYPE_CHECKING (docs/architecture.md shows the same layers)."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[2] / "src" / "issuebench"

# Top to bottom. A unit imports only units of its own layer or below; within a layer the imports
# between units must not form a circle.
LAYERS: list[set[str]] = [
    {"cli", "__main__"},
    {"analysis", "regrade"},
    {"strength"},
    {"synth", "agent", "infer"},
    {"collect"},
    {"setup"},
    {"harness"},
    {"envs"},
    {"patch", "parsers", "grading", "sandbox", "repos", "index", "executors", "llm", "datasets", "predictions_file"},
    {"models", "errors", "config", "code_digest", "interrupts", "procs", "demo", "tomlcompat", "files", "content_store", "issuebench"},
]
RANK = {unit: rank for rank, layer in enumerate(LAYERS) for unit in layer}
# Where a function-level import is the point: the command line imports a verb's machinery only
# when the verb runs, so `issuebench --help` starts fast.
LAZY_ALLOWED = {"cli", "__main__"}
MAX_INNER_SHARE = 0.05


@dataclass(frozen=True)
class Import:
    module: str      # the importing module, e.g. issuebench.harness.run
    target: str      # the imported module, e.g. issuebench.envs
    names: tuple[str, ...]
    inner: bool      # inside a function or class body


def unit(module: str) -> str:
    parts = module.split(".")
    return "issuebench" if len(parts) == 1 else parts[1]


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent)
        if "data" in rel.parts[:-1]:
            continue  # files the harness runs inside the sandbox, not modules of the package
        name = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        found.append((name, path))
    return found


def imports() -> list[Import]:
    out = []
    for module, path in modules():
        tree = ast.parse(path.read_text())
        top = set()
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                top.update(id(n) for n in ast.walk(node))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "issuebench":
                out.append(Import(module, node.module, tuple(a.name for a in node.names), id(node) not in top))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "issuebench":
                        out.append(Import(module, alias.name, (), id(node) not in top))
    return out


def test_every_unit_has_a_layer():
    assert {unit(m) for m, _ in modules()} - set(RANK) == set()


def test_layers_import_one_way_only():
    upward = sorted(f"{i.module} imports {i.target} (layer {RANK[unit(i.target)]} over {RANK[unit(i.module)]})"
                    for i in imports() if RANK[unit(i.target)] < RANK[unit(i.module)])
    assert upward == []


def test_no_circle_between_units():
    graph: dict[str, set[str]] = defaultdict(set)
    for i in imports():
        if unit(i.module) != unit(i.target):
            graph[unit(i.module)].add(unit(i.target))

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    circles = sorted(f"{a} -> {b} -> ... -> {a}" for a in graph for b in graph[a] if reaches(b, a, {b}))
    assert circles == []


def test_imports_inside_functions_stay_rare_outside_the_command_line():
    counted = [i for i in imports() if unit(i.module) not in LAZY_ALLOWED]
    inner = sorted(f"{i.module}: {i.target}" for i in counted if i.inner)
    assert len(inner) <= MAX_INNER_SHARE * len(counted), inner


def faces() -> dict[str, set[str]]:
    """Each package's public names: its __init__'s __all__."""
    out = {}
    for init in PACKAGE.glob("*/__init__.py"):
        tree = ast.parse(init.read_text())
        names: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
                names = {ast.literal_eval(e) for e in node.value.elts}
        out[init.parent.name] = names
    return out


def test_packages_meet_only_at_their_faces():
    """Across packages: `from issuebench.pkg import name`, with `name` in pkg.__all__; never a
    submodule, never a private name."""
    public = faces()
    wrong = []
    for i in imports():
        target_unit = unit(i.target)
        if target_unit == unit(i.module) or target_unit not in public:
            continue
        if i.target != f"issuebench.{target_unit}":
            wrong.append(f"{i.module} reaches into {i.target}")
            continue
        wrong += [f"{i.module} imports {name}, which issuebench.{target_unit} does not export"
                  for name in i.names if name not in public[target_unit]]
    assert sorted(wrong) == []


@pytest.mark.parametrize("package", sorted(faces()))
def test_a_face_exports_what_it_names(package):
    import importlib

    module = importlib.import_module(f"issuebench.{package}")
    assert [name for name in sorted(faces()[package]) if not hasattr(module, name)] == []
