"""Where issuebench keeps its caches. One root, overridable with ISSUEBENCH_HOME."""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Inside every sandbox the instance's workspace is mounted here, so an editable install made
# once into a shared environment points at whichever workspace is being tested.
TESTBED_PATH = "/tmp/testbed"


def home() -> Path:
    root = os.environ.get("ISSUEBENCH_HOME")
    path = Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "issuebench"
    path.mkdir(parents=True, exist_ok=True)
    return path


def envs_dir() -> Path:
    return _sub("envs")


def repos_cache_dir() -> Path:
    return _sub("repos")


# A run's workspaces are made and removed for every test run: thousands of files created and
# deleted each time. On a memory filesystem that costs a fraction of what a disk's journal does
# beside running tests (a sympy checkout: 0.15 s against 0.4-2 s on an ext4 disk, measured by
# benchmarks/workspace_location.py), so they go there when one with room is at hand. The
# sandbox mounts a /dev of its own, so no test sees the folder. ISSUEBENCH_WORKSPACES names another folder, or "home" for the home's own.
MEMORY_FS = Path("/dev/shm")
MEMORY_FS_MIN_FREE = 8 * 2**30     # free on the memory filesystem and in RAM, or the disk is used


def workspaces_dir() -> Path:
    """Where workspaces (one checkout per test run, removed after it) are made."""
    return workspaces_root(home())


def workspaces_root(root: Path) -> Path:
    """Where workspaces go for the home `root`: ISSUEBENCH_WORKSPACES, else this user's folder on a
    memory filesystem when it has room (one for every home: a workspace's name holds its process,
    which is all the sweep of dead runs' workspaces needs), else the home's own `work`."""
    chosen = os.environ.get("ISSUEBENCH_WORKSPACES", "")
    if chosen and chosen != "home":
        path = Path(chosen)
    elif not chosen and (memory := _memory_workspaces()) is not None:
        return memory
    else:
        path = root / "work"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _memory_workspaces() -> Path | None:
    if not _memory_fs_has_room():
        return None
    own = MEMORY_FS / f"issuebench-{os.getuid()}"
    try:
        own.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(own)
    except OSError:
        return None
    # The folder is shared ground: use it only if it is a real folder of ours, closed to others.
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return own


def _memory_fs_has_room() -> bool:
    try:
        mounts = Path("/proc/self/mounts").read_text()
        fs = os.statvfs(MEMORY_FS)
    except OSError:
        return False
    tmpfs = any(f[1] == str(MEMORY_FS) and f[2] == "tmpfs" for f in (line.split() for line in mounts.splitlines())
                if len(f) > 2)
    return (tmpfs and os.access(MEMORY_FS, os.W_OK) and fs.f_bavail * fs.f_frsize >= MEMORY_FS_MIN_FREE
            and _available_memory() >= MEMORY_FS_MIN_FREE)


def _available_memory() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def keeps_pristine_bytecode() -> bool:
    """Whether a run's compiled modules are compiled into the pristine checkout for later runs
    (envs.python_bytecode); ISSUEBENCH_PRISTINE_BYTECODE=0 turns it off."""
    return os.environ.get("ISSUEBENCH_PRISTINE_BYTECODE", "1") != "0"


def prunes_uv_cache() -> bool:
    """Whether an eval run or `envs build` prunes uv's cache when it ends (harness.uv_cache);
    ISSUEBENCH_PRUNE_UV_CACHE=0 turns it off."""
    return os.environ.get("ISSUEBENCH_PRUNE_UV_CACHE", "1") != "0"


def uses_compile_cache() -> bool:
    """Whether pristine builds share a compile cache per environment (harness.compile_cache);
    ISSUEBENCH_COMPILE_CACHE=0 turns it off."""
    return os.environ.get("ISSUEBENCH_COMPILE_CACHE", "1") != "0"


def results_cache_dir() -> Path:
    return _sub("results")


def _sub(name: str) -> Path:
    path = home() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
