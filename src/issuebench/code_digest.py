"""Digests of the code that decides a verdict or an environment's contents.

A cached result or a built environment is only as good as the code that made it. Instead of version
numbers bumped by hand (and forgotten), the keys carry a digest of that code itself: the syntax tree
of every module of the packages that decide (docstrings left out, so prose does not rebuild
environments) and the data files they read. Change a parser and no result graded by the old one is
served again; change how environments are dated and none built under the old rules is handed out.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent

# What decides a verdict: reading the patch, running the tests, reading their output, grading.
VERDICT_CODE = ("grading.py", "models.py", "harness", "parsers", "patch", "sandbox")
# What decides an environment's contents. Recipes are data already in each spec's own hash.
ENV_BUILD_CODE = ("envs",)
_SKIPPED_DIRS = {"__pycache__", "recipes"}
_DATA_SUFFIXES = (".toml", ".json", ".txt")


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _file_digest(path: Path) -> bytes:
    text = path.read_bytes()
    if path.suffix == ".py":
        try:
            tree = ast.parse(text, filename=str(path))
        except SyntaxError:
            return text  # not Python of this interpreter (a helper for old Pythons): its bytes
        return ast.dump(_without_docstrings(tree), include_attributes=False).encode()
    return text


def _files(parts: tuple[str, ...], root: Path) -> list[Path]:
    found: list[Path] = []
    for part in parts:
        target = root / part
        if target.is_file():
            found.append(target)
            continue
        for path in target.rglob("*"):
            if path.is_file() and not _SKIPPED_DIRS & set(path.relative_to(root).parts) \
                    and (path.suffix == ".py" or path.suffix in _DATA_SUFFIXES):
                found.append(path)
    return sorted(found)


@functools.cache
def digest_of(parts: tuple[str, ...], root: Path = ROOT) -> str:
    """A digest of the modules and data files under `parts` (paths inside `root`, the package)."""
    h = hashlib.sha256()
    for path in _files(parts, root):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(_file_digest(path)).digest())
    return h.hexdigest()[:16]


def verdict_code() -> str:
    return digest_of(VERDICT_CODE)


def env_build_code() -> str:
    return digest_of(ENV_BUILD_CODE)
