"""Git in a work tree: the one way the harness and the environments run git on a checkout, and
the two questions they ask of one (what changed since HEAD, put these paths back)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from issuebench.errors import IssuebenchError

_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "HOME": "/nonexistent",
            "GIT_AUTHOR_NAME": "issuebench", "GIT_AUTHOR_EMAIL": "harness@issuebench",
            "GIT_COMMITTER_NAME": "issuebench", "GIT_COMMITTER_EMAIL": "harness@issuebench",
            "PATH": "/usr/local/bin:/usr/bin:/bin"}


def git(cwd: Path, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=cwd, capture_output=True, text=True,
                          env=_GIT_ENV, input=input)
    if check and proc.returncode != 0:
        raise IssuebenchError(f"git {' '.join(args[:3])} failed in {cwd}: {proc.stderr.strip()[-500:]}")
    return proc


def reset_paths(ws: Path, base_commit: str, paths: list[str]) -> list[str]:
    """Put each path back as it was at base_commit (deleting it if it did not exist). Returns changed."""
    changed: list[str] = []
    for rel in paths:
        exists_at_base = git(ws, "cat-file", "-e", f"{base_commit}:{rel}", check=False).returncode == 0
        target = ws / rel
        if exists_at_base:
            before = target.read_bytes() if target.is_file() else None
            git(ws, "checkout", base_commit, "--", rel)
            if before != target.read_bytes():
                changed.append(rel)
        elif target.exists() or target.is_symlink():
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()
            changed.append(rel)
    return changed


def changed_paths(ws: Path, *, include_ignored: bool = False) -> list[str]:
    """Paths added, modified or deleted in the work tree against HEAD (untracked included)."""
    args = ["status", "--porcelain=v1", "-z", "--untracked-files=all"]
    if include_ignored:
        args.append("--ignored=matching")
    out = git(ws, *args).stdout
    paths: list[str] = []
    entries = out.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        if not entry:
            i += 1
            continue
        code, path = entry[:2], entry[3:]
        paths.append(path)
        if code[0] in "RC":  # renames carry the source path in the next entry
            paths.append(entries[i + 1])
            i += 1
        i += 1
    return paths


def tree_blobs(repo: Path, commit: str) -> dict[str, str]:
    """path -> blob id of every file in `commit`'s tree (gitlinks left out); empty when git cannot
    list it. Paths that are not UTF-8 keep their bytes (surrogateescape)."""
    proc = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(repo), "ls-tree", "-r", "-z", commit],
                          capture_output=True, env=_GIT_ENV, check=False)
    out: dict[str, str] = {}
    if proc.returncode != 0:
        return out
    for record in proc.stdout.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        parts = meta.split()
        if path and len(parts) == 3 and parts[1] == b"blob":
            out[path.decode("utf-8", "surrogateescape")] = parts[2].decode()
    return out
