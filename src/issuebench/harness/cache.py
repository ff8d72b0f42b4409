"""A content-addressed store of finished instance folders, shared by every run on this machine.

The key (see instance.cache_key) holds the task, the patch, the spec, the harness version and the
limits, so a changed patch never meets a stale result, while the same prediction in a new run is
copied instead of re-run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from issuebench import config
from issuebench.interrupts import may_record


def _entry(key: str) -> Path:
    return config.results_cache_dir() / key[:2] / key


def store(key: str, instance_dir: Path) -> None:
    """Share a finished instance folder with later runs (never once this run was interrupted)."""
    with may_record() as allowed:
        if allowed:
            _store(key, instance_dir)


def _store(key: str, instance_dir: Path) -> None:
    dest = _entry(key)
    if dest.exists():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=dest.parent))
    try:
        shutil.copytree(instance_dir, tmp / "x")
        (tmp / "x").rename(dest)
    except OSError:
        pass  # another run stored it first
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def restore(key: str, instance_dir: Path) -> bool:
    src = _entry(key)
    with may_record() as allowed:
        if not allowed or not (src / "result.json").is_file():
            return False
        return _copy_entry(src, key, instance_dir)


def _copy_entry(src: Path, key: str, instance_dir: Path) -> bool:
    instance_dir.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.name in ("run_instance.log",):
            continue
        shutil.copy2(item, instance_dir / item.name)
    with (instance_dir / "run_instance.log").open("a", encoding="utf-8") as fh:
        fh.write(f"result restored from the result cache (key {key})\n")
    return True
