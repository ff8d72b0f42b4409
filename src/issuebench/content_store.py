"""Trees that are only ever read share the files they hold alike: one copy on disk per content.

Pristine checkouts of one repository at nearby commits hold mostly the same files, and
environments of one repository's versions hold many of the same packages (measured on the
SWE-bench rows of thirteen repositories: checkouts keep a quarter to a half of their bytes
once shared, environments four fifths). So a finished tree's regular files become hard links into a
store keyed by content and mode. That is safe only for trees nothing writes to once made:
workspaces are copies of a checkout made without keeping hard links (create_workspace), an
environment is bound read-only into every run and rebuilt by removal, and what is added later
(kept bytecode) is new files. Sharing is a saving, never a condition: a file that cannot be
linked keeps its own copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
from pathlib import Path

STORE = ".files"  # the store's name beside the trees: a dot-name, never taken for a tree


def share_files(tree: Path, store: Path, *, min_bytes: int = 0) -> int:
    """Link every regular file of `tree` (outside .git, of at least min_bytes) to the store;
    returns the bytes saved."""
    if not tree.is_dir():
        return 0
    store.mkdir(parents=True, exist_ok=True)
    saved = 0
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            saved += _share(Path(folder) / name, store, min_bytes)
    return saved


def _share(path: Path, store: Path, min_bytes: int) -> int:
    swap = path.with_name(f".{path.name}.issuebench-link")
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_size < min_bytes:
            return 0
        entry = store / _key(path, info.st_mode)
        try:
            os.link(path, entry)  # the first of its content: it becomes the store's copy
            return 0
        except FileExistsError:
            pass
        os.link(entry, swap)
        os.replace(swap, path)
        return info.st_blocks * 512
    except OSError:  # a store entry swept meanwhile, a file system without links: keep the copy
        with contextlib.suppress(OSError):
            swap.unlink()
        return 0


def _key(path: Path, mode: int) -> str:
    digest = hashlib.blake2b(digest_size=20)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return f"{digest.hexdigest()}-{stat.S_IMODE(mode):o}"


def sweep_store(store: Path) -> int:
    """Remove store entries no tree links to any more (after a removal); returns how many."""
    removed = 0
    with contextlib.suppress(FileNotFoundError), os.scandir(store) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_nlink == 1:
                    os.unlink(entry.path)
                    removed += 1
    return removed


def copy_unlinked(src: Path, dst: Path) -> subprocess.CompletedProcess[str]:
    """`src`'s contents into `dst`, times kept, as files of dst's own: a copy never keeps the hard
    links of a shared tree, so writing to it in place changes nothing else."""
    return subprocess.run(["cp", "-a", "--no-preserve=links", "--reflink=auto", f"{src}/.", str(dst)],
                          capture_output=True, text=True)
