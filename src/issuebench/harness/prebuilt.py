"""What a recipe's pre_test builds in a pristine workspace (compiled extensions), made once per
checkout and environment and laid over every later workspace of that checkout.

The reference builds each instance's image with the project installed at the base commit, so its
testbed holds the compiled extensions before any test run and the eval script's rebuild is
incremental. A workspace here is a fresh copy of the pristine checkout: without this, every run
would compile every extension again (astropy: 70 to 200 seconds a run, where the rebuild over
the products takes under a second). The products are made from the base commit alone, in the
sandbox with no network, before any patch is in the tree, so no patch can reach what another run
reuses. Each run's own pre_test then rebuilds what its patch made older than its sources: the
products keep their build time, newer than the checkout's files, and a patched file is newer
still.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from issuebench.content_store import STORE, copy_unlinked, share_files

LAYERS = ".built"  # beside the pristine checkouts: a dot-name, never taken for one
DONE = ".issuebench-built"
FAILED = ".issuebench-build-failed"


def layer_path(pristine: Path, env_hash: str) -> Path:
    return pristine.parent / LAYERS / f"{pristine.name}-{env_hash}"


def lay_prebuilt(run_in_sandbox: Any, pre_test: list[str], ws: Path, pristine: Path,
                 env_hash: str) -> tuple[list[str], float]:
    """The products laid over `ws` (built first when no run made them yet): (notes, build seconds).

    `run_in_sandbox(script)` runs a bash script over `ws` as the tests run (no network) and
    returns the sandbox's RunResult."""
    if not pre_test or not (pristine / ".git").is_dir():
        return [], 0.0
    layer = layer_path(pristine, env_hash)
    if (layer / DONE).is_file():
        return _laid(layer, ws), 0.0
    if (layer / FAILED).is_file():
        return [], 0.0
    layer.parent.mkdir(parents=True, exist_ok=True)
    with (layer.parent / f".{layer.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build per checkout and environment; the others wait
        if (layer / DONE).is_file():
            return _laid(layer, ws), 0.0
        if (layer / FAILED).is_file():
            return [], 0.0
        start = time.monotonic()
        result = run_in_sandbox("\n".join(pre_test))
        seconds = time.monotonic() - start
        if result.status != "ok" or result.returncode != 0:
            layer.mkdir(exist_ok=True)
            (layer / FAILED).write_text(f"{result.status} rc={result.returncode}\n{result.output[-2000:]}")
            return [f"the recipe's pre_test failed on the pristine checkout ({result.status}, rc="
                    f"{result.returncode}): each run builds its products itself"], seconds
        count = _capture(ws, pristine, layer)
        return [f"the recipe's pre_test built {count} files in the pristine checkout in {seconds:.0f}s, "
                "kept for every later run of this checkout and environment"], seconds


def _laid(layer: Path, ws: Path) -> list[str]:
    proc = copy_unlinked(layer, ws)
    (ws / DONE).unlink(missing_ok=True)
    if proc.returncode != 0:
        return [f"the pristine checkout's build products could not be laid over the workspace "
                f"({proc.stderr.strip()[-200:]}): the run builds them itself"]
    return ["build products of the pristine checkout (its recipe's pre_test, made once) laid over the workspace"]


def _capture(ws: Path, pristine: Path, layer: Path) -> int:
    """Every file the build added or changed (by size or modification time) into a new layer."""
    staging = Path(tempfile.mkdtemp(prefix=f".{layer.name}-", dir=layer.parent))
    count = 0
    for folder, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(folder) / name
            rel = path.relative_to(ws)
            if _unchanged(path, pristine / rel):
                continue
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target, follow_symlinks=False)
            count += 1
    (staging / DONE).write_text(f"{count}\n")
    # One copy on disk per content, with the checkouts' files: a shared product keeps the time of
    # its first build, still newer than the sources it was built from (they are shared alike).
    share_files(staging, layer.parent.parent / STORE)
    shutil.rmtree(layer, ignore_errors=True)
    os.rename(staging, layer)
    return count


def _unchanged(path: Path, original: Path) -> bool:
    try:
        now, before = path.lstat(), original.lstat()
    except FileNotFoundError:
        return False
    return now.st_size == before.st_size and now.st_mtime_ns == before.st_mtime_ns


def remove_layers(pristine: Path) -> None:
    """Every environment's products of a checkout that goes (evicted)."""
    for layer in (pristine.parent / LAYERS).glob(f"{pristine.name}-*"):
        shutil.rmtree(layer, ignore_errors=True)
