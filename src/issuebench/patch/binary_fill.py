"""Binary files a diff names without their data, filled from the repository's own objects.

`git diff` without `--binary` writes a changed image as one line (`Binary files a/x and b/x differ`)
with the blob ids on its `index` line; SWE-bench's test patches are made that way (Chart.js's
image fixtures), and its reference harness copies those files from assets baked into its images.
Here the post-image blob is looked up by the id the `index` line names in a repository the caller
trusts to hold it: the source clone, whose pull-request commits a workspace (one shallow commit)
does not show. Only a task's own test patch is filled so: a prediction may not draw the future's
blobs out of the clone. The blobs are written once the text sections applied. A
section whose blob cannot be found (or whose abbreviated id is ambiguous) stays in the patch, so
the patch fails as before, naming the file. Only blobs already in the repository can be written,
and only inside the tree, never through a symbolic link.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from issuebench.patch.parse import FilePatch, PatchParseError, parse_patch, unsafe_path_reason
from issuebench.patch.safe_git import GIT

_INDEX = re.compile(r"^index ([0-9a-f]{7,64})\.\.([0-9a-f]{7,64})", re.M)
_DATALESS = re.compile(r"^Binary files .* differ$", re.M)


@dataclass(frozen=True)
class BinaryFill:
    path: str           # where the file lands, relative to the tree
    blob: str | None    # the full blob id to write; None deletes the file


def dataless_binaries(objects: Path, text: str) -> tuple[str, list[BinaryFill]]:
    """(the patch without the data-less binary sections the repository `objects` can fill, those fills)."""
    try:
        files = parse_patch(text)
    except PatchParseError:
        return text, []
    fills: list[BinaryFill] = []
    kept: list[FilePatch] = []
    for fp in files:
        fill = _fill_for(objects, fp)
        if fill is None:
            kept.append(fp)
        else:
            fills.append(fill)
    if not fills:
        return text, []
    return "".join(fp.text if fp.text.endswith("\n") else fp.text + "\n" for fp in kept), fills


def _fill_for(objects: Path, fp: FilePatch) -> BinaryFill | None:
    if not fp.is_binary or "GIT binary patch" in fp.text or not _DATALESS.search(fp.text) or fp.is_rename:
        return None
    path = fp.path_new or fp.path_old
    index = _INDEX.search(fp.text)
    if path is None or index is None:
        return None
    if fp.is_deleted or set(index.group(2)) == {"0"}:
        return BinaryFill(path, None)
    blob = _full_blob_id(objects, index.group(2))
    return BinaryFill(path, blob) if blob else None


def _full_blob_id(repo_dir: Path, short: str) -> str | None:
    """The one blob `short` names in the repository, or None (absent, ambiguous, not a blob)."""
    proc = subprocess.run([*GIT, "rev-parse", "--verify", "--quiet", f"{short}^{{blob}}"], cwd=repo_dir,
                          capture_output=True, text=True, timeout=60, check=False)
    full = proc.stdout.strip()
    return full if proc.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", full) else None


def unsafe_target(repo_dir: Path, rel: str) -> bool:
    """Whether writing `rel` could land outside the tree, in .git, or through a symbolic link."""
    if unsafe_path_reason(rel) is not None:
        return True
    parts = Path(rel).parts
    if any(repo_dir.joinpath(*parts[:depth]).is_symlink() for depth in range(1, len(parts) + 1)):
        return True
    return not (repo_dir / rel).parent.resolve().is_relative_to(repo_dir.resolve())


def write_fills(repo_dir: Path, objects: Path, fills: list[BinaryFill]) -> str:
    """Write each fill into the tree at `repo_dir` from `objects`; the log lines say what was written."""
    log = []
    for fill in fills:
        target = repo_dir / fill.path
        if fill.blob is None:
            if target.is_file():
                target.unlink()
            log.append(f"binary {fill.path}: deleted (no data in the patch)")
            continue
        data = subprocess.run([*GIT, "cat-file", "blob", fill.blob], cwd=objects, capture_output=True,
                              timeout=120, check=True).stdout
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        log.append(f"binary {fill.path}: blob {fill.blob[:12]} from the source repository ({len(data)} bytes)")
    return "\n".join(log)
