"""Pristine checkouts share the files they hold alike: one copy on disk per content.

Checkouts of one repository at nearby commits hold mostly the same files (measured on the
SWE-bench rows of thirteen repositories: a quarter to a third of the bytes are unique), so each
new checkout's regular files become hard links into a store keyed by content and mode. That is
safe because a checkout is only ever read: workspaces are copies of it made without keeping hard
links (create_workspace), and what is added to a checkout later (kept bytecode) is new files.
Sharing is a saving, never a condition: any file that cannot be linked simply keeps its own copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from pathlib import Path

STORE = ".files"  # beside the checkouts; a dot-name, so never taken for a checkout


def store_of(root: Path) -> Path:
    return root / STORE


def share_files(checkout: Path, store: Path) -> int:
    """Link every regular file of `checkout` (outside .git) to the store; returns the bytes saved."""
    store.mkdir(parents=True, exist_ok=True)
    saved = 0
    for folder, dirs, files in os.walk(checkout):
        if folder == str(checkout):
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            saved += _share(Path(folder) / name, store)
    return saved


def _share(path: Path, store: Path) -> int:
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            return 0
        entry = store / _key(path, info.st_mode)
        try:
            os.link(path, entry)  # the first of its content: it becomes the store's copy
            return 0
        except FileExistsError:
            pass
        swap = path.with_name(f".{path.name}.issuebench-link")
        os.link(entry, swap)
        os.replace(swap, path)
        return info.st_blocks * 512
    except OSError:  # a store entry swept meanwhile, a file system without links: keep the copy
        with contextlib.suppress(OSError):
            path.with_name(f".{path.name}.issuebench-link").unlink()
        return 0


def _key(path: Path, mode: int) -> str:
    digest = hashlib.blake2b(digest_size=20)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return f"{digest.hexdigest()}-{stat.S_IMODE(mode):o}"


def sweep_store(store: Path) -> int:
    """Remove store entries no checkout links to any more (after an eviction); returns how many."""
    removed = 0
    with contextlib.suppress(FileNotFoundError), os.scandir(store) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_nlink == 1:
                    os.unlink(entry.path)
                    removed += 1
    return removed
