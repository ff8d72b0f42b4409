"""The files of a repository at a commit, read straight from its git objects (no checkout).

`git ls-tree` lists the tree, one `git cat-file --batch` streams the blobs: reading a few thousand
Python files of a large project this way takes well under a second and leaves no work tree.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from issuebench.errors import IssuebenchError

MAX_FILE_BYTES = 1_000_000   # generated tables and vendored blobs say nothing about an issue
_GIT = ["git", "-c", "safe.directory=*"]
_TEST_DIRS = {"test", "tests", "testing"}


def is_test_path(path: str) -> bool:
    """The reference's rule of thumb for test files: a test folder, or test_*.py / *_test.py."""
    p = PurePosixPath(path)
    return bool(_TEST_DIRS.intersection(p.parts[:-1])) or p.name.startswith("test_") or p.name.endswith("_test.py")


def python_sources(path: str) -> bool:
    return path.endswith(".py") and not is_test_path(path)


def list_files(repo: str, commit: str, keep: Callable[[str], bool] = python_sources) -> list[tuple[str, str, int]]:
    """(path, blob sha, size) of every file at `commit` that `keep` accepts, in tree order."""
    proc = subprocess.run([*_GIT, "-C", repo, "ls-tree", "-r", "-z", "--long", commit],
                          capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        raise IssuebenchError(f"cannot list {commit[:12]} in {repo}: {proc.stderr.strip()[-200:]}",
                              hint="update the clone (git fetch) or check the task's base_commit")
    out = []
    for entry in proc.stdout.split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if len(fields) != 4 or fields[1] != "blob" or fields[3] == "-":
            continue
        if keep(path):
            out.append((path, fields[2], int(fields[3])))
    return out


def read_blobs(repo: str, shas: Iterable[str]) -> dict[str, str | None]:
    """sha -> text for each blob (None when the clone lacks it: snapshots drop the biggest files)."""
    shas = list(dict.fromkeys(shas))
    if not shas:
        return {}
    proc = subprocess.run([*_GIT, "-C", repo, "cat-file", "--batch"], input="\n".join(shas).encode() + b"\n",
                          capture_output=True)
    data, pos, out = proc.stdout, 0, {}
    for sha in shas:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode(errors="replace").split()
        pos = end + 1
        if len(header) < 3 or header[1] == "missing":
            out[sha] = None
            continue
        size = int(header[2])
        out[sha] = data[pos:pos + size].decode("utf-8", errors="replace")
        pos += size + 1
    return out


def read_files(repo: str, commit: str, keep: Callable[[str], bool] = python_sources,
               max_bytes: int = MAX_FILE_BYTES) -> dict[str, str]:
    """path -> text of the files `keep` accepts (too large or missing blobs left out)."""
    listed = [(p, sha) for p, sha, size in list_files(repo, commit, keep) if size <= max_bytes]
    blobs = read_blobs(repo, [sha for _, sha in listed])
    return {p: text for p, sha in listed if (text := blobs.get(sha)) is not None}


def read_paths(repo: str, commit: str, paths: Iterable[str]) -> dict[str, str]:
    """path -> text at `commit` for the given paths (paths absent at the commit are left out)."""
    wanted = set(paths)
    return read_files(repo, commit, keep=lambda p: p in wanted, max_bytes=10 * MAX_FILE_BYTES)
