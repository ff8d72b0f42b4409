"""Bytecode for a pristine checkout, so that later runs of its task do not compile it again.

A workspace is a fresh copy of the task's pristine checkout, so every run compiled again every
module it imported (`import sympy`: 3.0 s of CPU from source, 0.75 s from bytecode). After a run,
the modules it compiled are compiled once more, from the pristine checkout's own sources, into that
checkout's `__pycache__`, which the next workspaces copy. Each .pyc is hash-checked (PEP 552): Python
uses it only while the source's bytes hash to the ones it was compiled from, so a file a patch or the
test reset rewrote is compiled from its source as before, whatever its size and time.

Nothing the run wrote is kept: its `__pycache__` only says which modules to compile (names,
checked against the checkout's regular files). The compiling runs in the sandbox (`python -I -S`,
py_compile: compiling executes nothing of the source), reading the checkout read-only and writing
to a folder of its own; each file then moves into the checkout with a rename, so a copy made at the
same moment sees a whole .pyc or none. A .pyc is shared with every other checkout holding the same
bytes (content_store), as the checkouts' sources are.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from issuebench import config
from issuebench.content_store import STORE, share_files
from issuebench.sandbox import Bind, Limits

# More names than a run could import is a run that made them up: past this many, none is compiled.
MAX_MODULES = 20000
_SOURCE_MOUNT = "/tmp/issuebench-pristine"   # beside the workspace, under the sandbox's own /tmp
_COMPILE_LIMITS = Limits(timeout=300, max_procs=16)
# Compiles each listed module of the read-only pristine checkout into out/<index>.pyc. The path
# compiled in is the mount's; importing from a .pyc sets the module's real path (importlib's
# _fix_co_filename), so tracebacks show the workspace's.
_COMPILE_SCRIPT = """\
import py_compile, sys
checked = py_compile.PycInvalidationMode.CHECKED_HASH
for i, rel in enumerate(open("modules.txt").read().splitlines()):
    try:
        py_compile.compile(sys.argv[1] + "/" + rel, cfile="out/%d.pyc" % i, doraise=True, invalidation_mode=checked)
    except Exception:
        pass
"""


def cache_tag(python_version: str) -> str | None:
    """CPython's cache tag for a version ("3.9.18" -> "cpython-39"); None before 3.7 (no hash-checked .pyc)."""
    match = re.match(r"(\d+)\.(\d+)", python_version or "")
    if match is None or (int(match[1]), int(match[2])) < (3, 7):
        return None
    return f"cpython-{match[1]}{match[2]}"


def compiled_modules(workspace: Path, pristine: Path, tag: str) -> list[str]:
    """The modules (paths relative to the checkout) a run in `workspace` compiled whose pristine
    source is a regular file inside `pristine` that has no bytecode there yet."""
    found: list[str] = []
    suffix = f".{tag}.pyc"
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = [d for d in dirs if d != ".git"]
        if Path(folder).name != "__pycache__":
            continue
        rel_dir = Path(folder).relative_to(workspace).parent
        for name in files:
            # `mod.cpython-39.pyc` only: pytest's rewritten tests (`-pytest-X`) and `opt-N` files are not Python's plain bytecode.
            if not name.endswith(suffix) or "." in name[: -len(suffix)]:
                continue
            rel = (rel_dir / f"{name[: -len(suffix)]}.py").as_posix()
            if _is_pristine_source(pristine, rel) and not (pristine / rel_dir / "__pycache__" / name).exists():
                found.append(rel)
            if len(found) > MAX_MODULES:
                return []
    return sorted(found)


def _is_pristine_source(pristine: Path, rel: str) -> bool:
    path = pristine / rel
    try:
        return path.is_file() and not path.is_symlink() and path.resolve().is_relative_to(pristine.resolve())
    except OSError:
        return False


def fill_pristine_bytecode(env: Any, workspace: Path, pristine: Path, sandbox: Any) -> str | None:
    """Compile into `pristine` what the run in `workspace` compiled (once per environment); a line
    for the instance log, or None when there was nothing to do."""
    tag = cache_tag(getattr(env, "python_version", ""))
    marker = pristine / ".git" / f"issuebench-bytecode-{env.env_hash}"
    if not config.keeps_pristine_bytecode() or tag is None or not (pristine / ".git").is_dir() or marker.exists():
        return None
    with _try_lock(pristine.parent / f".{pristine.name}.bytecode.lock") as locked:
        if not locked or marker.exists():
            return None   # another run of this checkout is at it
        modules = compiled_modules(workspace, pristine, tag)
        placed, problem = _compile_into(env, pristine, modules, tag, sandbox) if modules else (0, "")
        marker.write_text(f"{placed}\n")
    return (f"bytecode: {placed} of {len(modules)} modules the run compiled kept in the pristine checkout"
            + (f" ({problem})" if problem else ""))


def _compile_into(env: Any, pristine: Path, modules: list[str], tag: str, sandbox: Any) -> tuple[int, str]:
    """How many modules were compiled into `pristine`, and what went wrong when none could be."""
    staging = Path(tempfile.mkdtemp(prefix=".bytecode-", dir=pristine.parent))
    try:
        (staging / "modules.txt").write_text("".join(f"{rel}\n" for rel in modules))
        (staging / "out").mkdir()
        # Without a sandbox (--no-sandbox) nothing is mounted: the checkout is read where it is.
        source = str(pristine) if getattr(sandbox, "name", "") == "none" else _SOURCE_MOUNT
        argv = [str(env.python), "-I", "-S", "-c", _COMPILE_SCRIPT, source]
        result = sandbox.run(argv, workspace=staging, binds=[*env.binds(), Bind(pristine, _SOURCE_MOUNT)],
                             env={"PATH": "/usr/bin:/bin"}, limits=_COMPILE_LIMITS)
        if result.status != "ok" or result.returncode != 0:
            return 0, f"the compiling ended {result.status} rc={result.returncode}: {result.output.strip()[-300:]}"
        # Compiled at one path (the mount's) and hash-checked, a module's bytecode is the same bytes in
        # every checkout that holds its source unchanged: one copy on disk, as their sources are.
        share_files(staging / "out", pristine.parent / STORE)
        return sum(_place(staging / "out" / f"{i}.pyc", pristine, rel, tag) for i, rel in enumerate(modules)), ""
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _place(compiled: Path, pristine: Path, rel: str, tag: str) -> bool:
    if not compiled.is_file() or compiled.is_symlink():
        return False
    source = Path(rel)
    cache = pristine / source.parent / "__pycache__"
    if cache.is_symlink() or (cache.exists() and not cache.is_dir()):
        return False   # a checkout's own `__pycache__` link could lead out of it
    cache.mkdir(exist_ok=True)
    os.replace(compiled, cache / f"{source.stem}.{tag}.pyc")
    return True


@contextlib.contextmanager
def _try_lock(path: Path):
    with path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
