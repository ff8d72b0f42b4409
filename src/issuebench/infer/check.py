"""Does an extracted patch apply at the base commit? Checked with the same patch engine (and its
repair of hunk counts and fuzz) that `eval` uses; what applied is written back as a clean diff."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from issuebench.harness import changed_paths, create_workspace, git, remove_workspace
from issuebench.models import PatchStatus
from issuebench.patch import apply_patch, check_patch


@dataclass
class ApplyCheck:
    status: str            # a PatchStatus value
    method: str | None
    patch: str             # the diff as it applied (repaired), else the patch as extracted
    reason: str = ""


def apply_check(source: Path, base_commit: str, patch: str, workspaces_dir: Path | None = None) -> ApplyCheck:

    early = check_patch(patch)
    if early is not None:
        return ApplyCheck(early.value, None, patch, "empty" if early is PatchStatus.EMPTY else "not a unified diff")
    ws = create_workspace(source, base_commit, workspaces_dir)
    try:
        result = apply_patch(ws, patch)
        if not result.applied:
            return ApplyCheck(result.status.value, None, patch, result.reason)
        paths = changed_paths(ws)
        if not paths:
            return ApplyCheck(PatchStatus.EMPTY.value, result.method, "", "the patch changes nothing")
        git(ws, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", input="\0".join(paths))
        clean = git(ws, "diff", "--cached", "--binary", "HEAD").stdout
        return ApplyCheck(result.status.value, result.method, clean)
    finally:
        remove_workspace(ws)
