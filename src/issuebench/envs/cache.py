"""The content-addressed store of built environments: layout, locks, manifests, disk accounting.

Layout under the envs root (issuebench.config.envs_dir() unless given):

    <hash>/               the venv; counts as built only once <hash>/env.json exists
    <hash>/env.json       the manifest (spec, python used, exclude_newer used, build time), written last
    <hash>/build.log      what the build printed
    <hash>.lock           a file lock held while building, so parallel workers build each env once
    <hash>.failed.json    a failed build: the reason, so later instances fail fast (cleared by --rebuild/prune)
    <hash>.last_used      touched on every use, for least-recently-used pruning
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from issuebench.content_store import STORE, sweep_store

MANIFEST = "env.json"
BUILD_LOG = "build.log"


# Folders beside the envs that are not envs: per-instance layers (envs/instance_requirements.py), the node tools (envs/node_tools.py).
NOT_ENVS = {"layers", "tools"}


def env_path(root: Path, env_hash: str) -> Path:
    return root / env_hash


def manifest_path(root: Path, env_hash: str) -> Path:
    return root / env_hash / MANIFEST


def failed_path(root: Path, env_hash: str) -> Path:
    return root / f"{env_hash}.failed.json"


def last_used_path(root: Path, env_hash: str) -> Path:
    return root / f"{env_hash}.last_used"


@contextlib.contextmanager
def hash_lock(root: Path, env_hash: str) -> Iterator[None]:
    """An exclusive lock for one env hash, across processes and threads (flock per open file)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{env_hash}.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_manifest(root: Path, env_hash: str) -> dict[str, Any] | None:
    try:
        return json.loads(manifest_path(root, env_hash).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def read_failure(root: Path, env_hash: str) -> dict[str, Any] | None:
    try:
        return json.loads(failed_path(root, env_hash).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


# A build that failed because the machine ran out of disk says nothing about its recipe: it is not
# recorded, so the next run builds again instead of failing fast with a full disk's reason.
_MACHINE_FAULTS = ("ENOSPC", "No space left on device", "Disk quota exceeded")


def machine_fault(text: str) -> bool:
    return any(sign in text for sign in _MACHINE_FAULTS)


def record_failure(root: Path, env_hash: str, reason: str, log_tail: str, spec: dict[str, Any]) -> None:
    if machine_fault(reason) or machine_fault(log_tail):
        return
    write_json_atomic(failed_path(root, env_hash),
                      {"env_hash": env_hash, "reason": reason, "log_tail": log_tail,
                       "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "spec": spec})


def clear_failure(root: Path, env_hash: str) -> None:
    failed_path(root, env_hash).unlink(missing_ok=True)


def touch_last_used(root: Path, env_hash: str) -> None:
    path = last_used_path(root, env_hash)
    try:
        path.touch()
        os.utime(path)
    except OSError:
        pass  # a read-only cache still works; LRU order just goes stale


def remove_env(root: Path, env_hash: str) -> None:
    shutil.rmtree(env_path(root, env_hash), ignore_errors=True)
    for suffix in (".failed.json", ".last_used"):
        (root / f"{env_hash}{suffix}").unlink(missing_ok=True)
    sweep_store(root / STORE)  # the files only that environment held


@dataclass
class EnvRecord:
    env_hash: str
    state: str                  # "built" | "failed" | "incomplete"
    python: str | None
    exclude_newer: str | None
    apparent_bytes: int
    last_used: float | None
    reason: str = ""


def _walk_files(path: Path) -> Iterator[os.stat_result]:
    for dirpath, _dirnames, filenames in os.walk(path):
        for name in filenames:
            try:
                yield os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue


def apparent_size(path: Path) -> int:
    """The sum of file sizes, every hard link counted again (what `du --apparent` per env adds up to)."""
    return sum(st.st_size for st in _walk_files(path))


def real_disk_usage(paths: list[Path]) -> int:
    """Bytes on disk for these trees together, each inode counted once (hard links shared)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for path in paths:
        for st in _walk_files(path):
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue
            seen.add(key)
            total += st.st_blocks * 512
    return total


def list_envs(root: Path) -> list[EnvRecord]:
    if not root.is_dir():
        return []
    hashes: set[str] = set()
    for entry in root.iterdir():
        name = entry.name
        if entry.is_dir() and not name.startswith(".") and name not in NOT_ENVS:
            hashes.add(name)
        elif name.endswith(".failed.json"):
            hashes.add(name[: -len(".failed.json")])
    records = []
    for env_hash in sorted(hashes):
        manifest = read_manifest(root, env_hash)
        failure = read_failure(root, env_hash)
        lu = last_used_path(root, env_hash)
        last_used = lu.stat().st_mtime if lu.exists() else None
        path = env_path(root, env_hash)
        size = apparent_size(path) if path.is_dir() else 0
        if manifest is not None:
            records.append(EnvRecord(env_hash, "built", manifest.get("python_version"),
                                     manifest.get("exclude_newer"), size, last_used))
        elif failure is not None:
            spec = failure.get("spec") or {}
            records.append(EnvRecord(env_hash, "failed", spec.get("python"), spec.get("exclude_newer"),
                                     size, last_used, failure.get("reason", "")))
        else:
            records.append(EnvRecord(env_hash, "incomplete", None, None, size, last_used))
    return records


def prune(root: Path, *, failed_only: bool = False, max_bytes: int | None = None,
          everything: bool = False) -> list[str]:
    """Remove envs; returns the hashes removed. Each removal holds the env's lock.

    failed_only: failed and incomplete builds. max_bytes: least recently used built envs until the
    real disk use of what remains fits. everything: all of them.
    """
    removed: list[str] = []
    records = list_envs(root)
    for rec in records:
        if everything or (rec.state != "built" and (failed_only or max_bytes is not None)):
            with hash_lock(root, rec.env_hash):
                # An "incomplete" env may have been a build in progress that finished while we
                # waited for its lock: it is built now, and stays.
                if not everything and read_manifest(root, rec.env_hash) is not None:
                    continue
                remove_env(root, rec.env_hash)
            removed.append(rec.env_hash)
    if max_bytes is not None and not everything:
        built = [r for r in records if r.state == "built"]
        built.sort(key=lambda r: r.last_used or 0.0)   # oldest use first
        remaining = [env_path(root, r.env_hash) for r in built]
        while built and real_disk_usage(remaining) > max_bytes:
            oldest = built.pop(0)
            with hash_lock(root, oldest.env_hash):
                remove_env(root, oldest.env_hash)
            removed.append(oldest.env_hash)
            remaining = [env_path(root, r.env_hash) for r in built]
    return removed
