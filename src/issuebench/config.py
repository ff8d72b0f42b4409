"""Where issuebench keeps its caches. One root, overridable with ISSUEBENCH_HOME."""

from __future__ import annotations

import os
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


def workspaces_dir() -> Path:
    return _sub("work")


def results_cache_dir() -> Path:
    return _sub("results")


def _sub(name: str) -> Path:
    path = home() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
