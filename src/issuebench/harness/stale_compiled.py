"""Compiled modules that would run in place of the source a task's tree holds.

Cython's pure-Python mode compiles a module's own `X.py` into an optional `X.cpython-311-...so`
beside it (habluetooth, bluetooth-data-tools), and the import system takes the extension module
over the source. Built once per environment from one commit, such a module carried into a
workspace of another commit, or left beside an `X.py` a patch changed, runs code the tree no
longer holds: habluetooth's compiled `manager` imported a name its commit's `const.py` lacked, and
a gold patch's fix to a compiled module never ran. Removed, the `.py` itself runs. Such modules
are built together and reach into each other's compiled internals (a `cimport`: habluetooth's
compiled `scanner_bleak` fails with `KeyError: '__pyx_vtable__'` beside a pure-Python
`base_scanner`), so when one is stale every one compiled from its own `.py` goes. A module
compiled from a `.pyx` has no source to fall back on and is left to the recipe's in-place rebuild.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

_COMPILED = (".so", ".pyd")


def python_source(compiled: str) -> str | None:
    """`pkg/X.py` for `pkg/X.cpython-311-x86_64-linux-gnu.so` (or `X.abi3.so`, `X.so`), else None."""
    path = PurePosixPath(compiled)
    if path.suffix not in _COMPILED:
        return None
    return str(path.with_name(path.name.split(".", 1)[0] + ".py"))


def drop_built_from_other_sources(ws: Path, products: list[str], built_from: dict[str, str],
                                  here: dict[str, str]) -> list[str]:
    """When a compiled product's `.py` (a blob id in `here`, this tree's) differs from the one it was
    built from (`built_from`), remove every product compiled from a `.py` of this tree; the removed,
    relative to `ws`."""
    from_python = [rel for rel in products if python_source(rel) in here]
    if not any(built_from.get(python_source(rel) or "") != here[python_source(rel) or ""] for rel in from_python):
        return []
    return [rel for rel in from_python if _remove(ws, rel)]


def drop_beside_changed(ws: Path, changed: list[str]) -> list[str]:
    """When a changed `.py` has a compiled module beside it, remove every compiled module of the
    workspace that has its own `.py` beside it; the removed, relative to `ws`."""
    if not any(_compiled_beside(ws, rel) for rel in changed if rel.endswith(".py")):
        return []
    found = sorted(str(path.relative_to(ws)) for suffix in ("so", "pyd") for path in ws.rglob(f"*.{suffix}")
                   if ".git" not in path.relative_to(ws).parts)
    return [rel for rel in found if (ws / (python_source(rel) or "")).is_file() and _remove(ws, rel)]


def _compiled_beside(ws: Path, rel: str) -> bool:
    path = PurePosixPath(rel)
    folder = ws / path.parent
    return folder.is_dir() and any(python_source(str(path.with_name(c.name))) == rel
                                   for c in folder.glob(f"{path.stem}.*"))


def _remove(ws: Path, rel: str) -> bool:
    """Unlink ws/rel unless it is a link or lies outside the workspace (a patch may have made a
    folder a link to anywhere: this runs on the host)."""
    target = ws / rel
    if target.is_symlink() or not target.is_file():
        return False
    if not target.resolve().is_relative_to(ws.resolve()):
        return False
    target.unlink()
    return True
