"""Files an install writes into the source tree, carried to every workspace that shares the env.

An environment is built once per recipe, from one workspace: the task's environment_setup_commit
when the clone has it (as the reference builds its environment images), else the first workspace
that needs it. Legacy editable installs leave `*.egg-info` (and in-place builds leave compiled
modules) in that tree, and pre-install steps may edit tracked files (a `sed` on setup.cfg); every
other workspace needs the same. What the install added is kept as a tar next to the environment and
unpacked into each new workspace; edits to tracked files are kept as a patch and applied to each
workspace's own version of those files (an env of older rules kept them whole in the tar).

Build products carried to a workspace of another commit are stale where that commit's sources
differ (a `.pyx` changed between the environment's commit and the task's): an in-place rebuild
(a recipe's pre_test) redoes only what is older than its sources, so the unpacked products are
dated now and the sources that differ from the build tree's (recorded as blob ids) just after.
"""

from __future__ import annotations

import fcntl
import json
import os
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

from issuebench.harness.stale_compiled import drop_built_from_other_sources
from issuebench.harness.workspace import changed_paths, git, remove_workspace
from issuebench.repos import tree_blobs

OVERLAY_NAME = ".issuebench-overlay.tar"
PATCH_NAME = ".issuebench-overlay.patch"
SOURCES_NAME = ".issuebench-overlay.sources"
_SKIP_PARTS = {"__pycache__", ".git"}


def ensure_env_with_overlay(builder, spec, ws: Path, build_from: Callable[[], Path | None] | None = None):
    """builder.ensure(spec, ws), plus capture or apply the install overlay.

    `build_from`, when given, makes the workspace to build a missing env from (None: use `ws`).
    """
    root = getattr(builder, "root", None)
    if root is not None and (Path(root) / spec.env_hash() / "env.json").is_file():
        # Built already: no install runs in this workspace, so there is nothing to capture.
        env = builder.ensure(spec, ws)
        apply_overlay(Path(env.path), ws)
        return env
    build_ws = _other_workspace(build_from)
    if build_ws is None:
        return _build_and_capture(builder, spec, ws)
    try:
        env = _build_and_capture(builder, spec, build_ws)
    finally:
        remove_workspace(build_ws)
    apply_overlay(Path(env.path), ws)
    return env


def _other_workspace(build_from: Callable[[], Path | None] | None) -> Path | None:
    if build_from is None:
        return None
    try:
        return build_from()
    except Exception:  # any failure means "build from the instance's own workspace"
        return None


def _build_and_capture(builder, spec, ws: Path):
    before = set(changed_paths(ws, include_ignored=True))
    env = builder.ensure(spec, ws)
    env_root = Path(env.path)
    tar_path, patch_path = env_root / OVERLAY_NAME, env_root / PATCH_NAME
    lock_path = env_root.parent / f".{env_root.name}.overlay.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        tracked = set(git(ws, "ls-files", "-z").stdout.split("\0"))
        added = [p for p in changed_paths(ws, include_ignored=True)
                 if p not in before and not _SKIP_PARTS.intersection(Path(p).parts)]
        if not added:
            # Nothing was installed here: another workspace built the env (and captured its overlay).
            _apply_locked(env_root, ws)
            return env
        if not (tar_path.exists() or patch_path.exists()):
            edited = [p for p in added if p in tracked]
            tmp = tar_path.with_suffix(".tmp")
            with tarfile.open(tmp, "w") as tar:
                for rel in added:
                    if rel not in tracked:
                        tar.add(ws / rel, arcname=rel)
            patch_path.write_text(git(ws, "diff", "--binary", "HEAD", "--", *edited).stdout if edited else "")
            (env_root / SOURCES_NAME).write_text(json.dumps(tree_blobs(ws, "HEAD")))
            tmp.replace(tar_path)
    return env


def apply_overlay(env_root: Path, ws: Path) -> None:
    lock_path = env_root.parent / f".{env_root.name}.overlay.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        _apply_locked(env_root, ws)


def _apply_locked(env_root: Path, ws: Path) -> None:
    tar_path, patch_path = env_root / OVERLAY_NAME, env_root / PATCH_NAME
    if tar_path.exists():
        with tarfile.open(tar_path) as tar:
            tar.extractall(ws, filter="data")
            products = [m.name for m in tar.getmembers() if m.isfile()]
        _date_products_before_changed_sources(env_root / SOURCES_NAME, ws, products)
    if patch_path.exists() and patch_path.read_text().strip():
        # The edit as a change, not as the build commit's whole file: the workspace's own version
        # of the file may differ. A hunk that does not apply is left out (git apply --reject would
        # leave .rej files in the tree); the workspace then keeps its own file.
        git(ws, "apply", "--whitespace=nowarn", str(patch_path), check=False)


def _date_products_before_changed_sources(sources_path: Path, ws: Path, products: list[str]) -> None:
    try:
        built_from = json.loads(sources_path.read_text())
    except (OSError, ValueError):
        return  # an env captured before sources were recorded: its products keep their build dates
    here = tree_blobs(ws, "HEAD")
    # A compiled module whose own .py differs here would run in its place: the .py runs instead.
    dropped = set(drop_built_from_other_sources(ws, products, built_from, here))
    now = time.time()
    for rel in (p for p in products if p not in dropped):
        os.utime(ws / rel, (now, now), follow_symlinks=False)
    for rel, blob in here.items():
        if built_from.get(rel) != blob and (ws / rel).is_file():
            os.utime(ws / rel, (now + 1, now + 1))
