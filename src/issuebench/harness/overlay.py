"""Files an install writes into the source tree, carried to every workspace that shares the env.

An environment is built once, from the first workspace of its recipe. Legacy editable installs
leave `*.egg-info` (and in-place builds leave compiled modules) in that workspace; every other
workspace needs them too. We capture what the install added as a tar next to the environment and
unpack it into each new workspace.
"""

from __future__ import annotations

import fcntl
import tarfile
from pathlib import Path

from issuebench.harness.workspace import changed_paths

OVERLAY_NAME = ".issuebench-overlay.tar"
_SKIP_PARTS = {"__pycache__", ".git"}


def ensure_env_with_overlay(builder, spec, ws: Path):
    """builder.ensure(spec, ws), plus capture or apply the install overlay."""
    root = getattr(builder, "root", None)
    if root is not None and (Path(root) / spec.env_hash() / "env.json").is_file():
        # Built already: no install runs in this workspace, so there is nothing to capture.
        env = builder.ensure(spec, ws)
        tar_path = Path(env.path) / OVERLAY_NAME
        if tar_path.exists():
            with tarfile.open(tar_path) as tar:
                tar.extractall(ws, filter="data")
        return env
    before = set(changed_paths(ws, include_ignored=True))
    env = builder.ensure(spec, ws)
    env_root = Path(env.path)
    tar_path = env_root / OVERLAY_NAME
    lock_path = env_root.parent / f".{env_root.name}.overlay.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        added = [p for p in changed_paths(ws, include_ignored=True)
                 if p not in before and not _SKIP_PARTS.intersection(Path(p).parts)]
        if added and not tar_path.exists():
            tmp = tar_path.with_suffix(".tmp")
            with tarfile.open(tmp, "w") as tar:
                for rel in added:
                    tar.add(ws / rel, arcname=rel)
            tmp.replace(tar_path)
        elif not added and tar_path.exists():
            with tarfile.open(tar_path) as tar:
                tar.extractall(ws, filter="data")
    return env
