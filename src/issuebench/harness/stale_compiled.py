"""Compiled modules that would run in place of the source a task's tree holds.

Cython's pure-Python mode compiles a module's own `X.py` into an optional `X.cpython-311-...so`
beside it (habluetooth, bluetooth-data-tools), and the import system takes the extension module
over the source. Built once per environment from one commit, such a module carried into a
workspace of another commit, or left beside an `X.py` a patch changed, runs code the tree no
longer holds: habluetooth's compiled `manager` imported a name its commit's `const.py` lacked, and
a gold patch's fix to a compiled module never ran. Removed, the `.py` itself runs. A module
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
    """Remove the compiled `products` whose `.py` (a blob id in `here`, this tree's) differs from the
    one they were built from (`built_from`); the removed, relative to `ws`."""
    dropped = []
    for rel in products:
        source = python_source(rel)
        if source is not None and source in here and built_from.get(source) != here[source] \
                and _remove(ws, rel):
            dropped.append(rel)
    return dropped


def drop_beside_changed(ws: Path, changed: list[str]) -> list[str]:
    """Remove the compiled modules beside each changed `.py`; the removed, relative to `ws`."""
    dropped = []
    for rel in changed:
        path = PurePosixPath(rel)
        if path.suffix != ".py":
            continue
        folder = ws / path.parent
        for candidate in sorted(folder.glob(f"{path.stem}.*")) if folder.is_dir() else []:
            compiled = str(PurePosixPath(rel).with_name(candidate.name))
            if python_source(compiled) == rel and _remove(ws, compiled):
                dropped.append(compiled)
    return dropped


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
