"""A throwaway git folder for a step that may write the repository's git config.

Inside the sandbox the workspace's .git is read-only, so that nothing run there can plant hooks or
config that the harness's own git commands would run later. Some install steps write it all the
same: npm's `prepare` scripts run husky (`core.hooksPath`) or npm-merge-driver-install (a merge
driver in `.git/config`, `.git/info/attributes`), and fail the whole install when they cannot, as
preact's does. In the reference's containers they succeed. For such a step the sandbox gets a copy
of .git without its objects, writable, over the read-only one, and the real objects read-only
inside it: every git command works, what the step writes lands in the copy, and the copy is thrown
away after the step.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from issuebench.config import TESTBED_PATH
from issuebench.sandbox.types import Bind


def scratch_git_binds(workspace: Path, scratch: Path) -> list[Bind]:
    """Binds giving the sandbox a writable copy of workspace/.git in `scratch` (objects read-only)."""
    git_dir = workspace / ".git"
    if not git_dir.is_dir() or not (git_dir / "objects").is_dir():
        return []
    copy = scratch / "git"
    shutil.copytree(git_dir, copy, symlinks=True, ignore=_objects_at_top(git_dir))
    (copy / "objects").mkdir()
    return [Bind(copy, f"{TESTBED_PATH}/.git", writable=True),
            Bind(git_dir / "objects", f"{TESTBED_PATH}/.git/objects")]


def _objects_at_top(git_dir: Path):
    def ignore(folder: str, names: list[str]) -> list[str]:
        return ["objects"] if Path(folder) == git_dir and "objects" in names else []
    return ignore
