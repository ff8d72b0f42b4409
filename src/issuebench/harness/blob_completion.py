"""Complete a clone that lacks some of a commit's files, from the project's releases on the index.

Some clones hold every commit but not every blob: a fetched snapshot leaves out files of 4 MiB and
more (pvlib's `LinkeTurbidities.h5`), and partial clones leave out what was never asked for. A
commit whose tree names a blob the clone lacks cannot be checked out at all. The same files usually
ship in the project's release sdists, so each missing blob is looked for there, nearest release to
the task's date first, and accepted only when its git blob id is the one the tree names: the
workspace then holds exactly the commit, byte for byte. Found blobs go into a side object store
(never into the source clone, which may be read-only) that git reads as an alternate.
"""

from __future__ import annotations

import fcntl
import hashlib
import subprocess
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

from issuebench import config
from issuebench.index import download_sdist, fetch_upload_times
from issuebench.models import stable_hash
from issuebench.repos import tree_blobs

# Releases tried per project before giving up; each is one sdist download.
MAX_RELEASES = 8


@dataclass
class Completion:
    store: Path | None                       # objects directory to add as an alternate, if any
    missing: list[tuple[str, str]]           # (path, blob id) still missing afterwards
    sources: list[str] = field(default_factory=list)   # releases the blobs came from
    filled: list[tuple[str, str]] = field(default_factory=list)   # (path, blob id) taken from them
    # (path, stored blob id, release) of missing files whose own bytes no release holds, where the
    # nearest release holding that path gives a stand-in: not the commit's bytes, said as such.
    stand_ins: list[tuple[str, str, str]] = field(default_factory=list)


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def missing_blobs(source: Path, commit: str) -> list[tuple[str, str]]:
    """(path, blob id) of each file in `commit`'s tree whose object the clone does not hold."""
    entries = list(tree_blobs(source, commit).items())
    if not entries:
        return []
    check = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(source), "cat-file", "--batch-check"],
                           input="\n".join(sha for _, sha in entries) + "\n", capture_output=True, text=True,
                           check=False)
    absent = {line.split()[0] for line in check.stdout.splitlines() if line.endswith(" missing")}
    return [(path, sha) for path, sha in entries if sha in absent]


def store_for(source: Path) -> Path:
    """The side object store of a source clone (a bare repository under the cache)."""
    root = config.home() / "blobs" / stable_hash([str(source.resolve())])[:16]
    if not (root / "objects").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "--quiet", "--bare", str(root)], capture_output=True, check=False)
    return root / "objects"


def complete(source: Path, commit: str, repo: str, when: str | None) -> Completion:
    """Find the commit's missing blobs in the project's release sdists; store those that match."""
    missing = missing_blobs(source, commit)
    if not missing:
        return Completion(None, [])
    store = store_for(source)
    # One search at a time per store: two workers checking out commits of one release would
    # otherwise each download and read the same sdists, and the second finds them stored.
    with open(store.parent / "search.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _complete_locked(store, missing, repo, when)


def _complete_locked(store: Path, missing: list[tuple[str, str]], repo: str, when: str | None) -> Completion:
    still = [(p, s) for p, s in missing if not _in_store(store, s)]
    # A blob no release held when it was last looked for is not looked for again: a search reads
    # every release's sdist (minutes), and a commit is checked out once per run at least.
    unknown = [(p, s) for p, s in still if not _searched_already(store, s)]
    if not unknown:
        return Completion(store, still, [], [m for m in missing if m not in still], _recorded_stand_ins(store, still))
    still = unknown + [m for m in still if m not in unknown]
    sources: list[str] = []
    nearest_same_path: dict[str, tuple[bytes, str]] = {}
    for name in _project_names(repo, missing):
        if not still:
            break
        for version in _releases_nearest(name, when):
            files = _blobs_in_release(name, version, still)
            if files.exact:
                for data in files.exact.values():
                    _write_blob(store, data)
                sources.append(f"{name} {version}")
                still = [(p, s) for p, s in still if s not in files.exact]
            for path, data in files.same_path.items():
                nearest_same_path.setdefault(path, (data, f"{name} {version}"))
            if not still:
                break
    for path, sha in still:
        record = f"not in the releases of {repo} near {when}\n{_RECORD_FORMAT}\n"
        if path in nearest_same_path:
            data, release = nearest_same_path[path]
            record += f"stand-in {_write_blob(store, data)} {release}\n"
        (_searched(store) / sha).write_text(record)
    return Completion(store, still, sources, [m for m in missing if m not in still], _recorded_stand_ins(store, still))


# A line of every search record that looked for stand-ins too: a record without it was
# written before stand-ins existed, and its blob is looked for again.
_RECORD_FORMAT = "searched for stand-ins"


def _searched_already(store: Path, sha: str) -> bool:
    record = _searched(store) / sha
    return record.is_file() and _RECORD_FORMAT in record.read_text().splitlines()


def _recorded_stand_ins(store: Path, still: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    found = []
    for path, sha in still:
        record = _searched(store) / sha
        lines = record.read_text().splitlines() if record.is_file() else []
        for line in lines:
            word, _, rest = line.partition(" ")
            blob, _, release = rest.partition(" ")
            if word == "stand-in" and _in_store(store, blob):
                found.append((path, blob, release))
    return found


def _searched(store: Path) -> Path:
    folder = store.parent / "not-in-releases"
    folder.mkdir(exist_ok=True)
    return folder


def _in_store(store: Path, sha: str) -> bool:
    return (store / sha[:2] / sha[2:]).is_file()


def _write_blob(store: Path, data: bytes) -> str:
    subprocess.run(["git", "--git-dir", str(store.parent), "hash-object", "-w", "--stdin"], input=data,
                   capture_output=True, check=False)
    return git_blob_id(data)


def read_blob(store: Path, blob: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(store.parent), "cat-file", "blob", blob],
                          capture_output=True, check=True).stdout


def _project_names(repo: str, missing: list[tuple[str, str]]) -> list[str]:
    """Distribution names to try: the repository's name, its name without a `-python` suffix, and
    the top folder of the missing files (the import package, often the distribution's name)."""
    name = repo.rsplit("/", 1)[-1]
    names = [name, name.removesuffix("-python").removeprefix("python-")]
    names += [p.split("/", 1)[0] for p, _ in missing if "/" in p]
    return list(dict.fromkeys(n for n in names if n))


def _releases_nearest(name: str, when: str | None) -> list[str]:
    """Releases of `name` nearest `when`, alternating: the newest before it, the first after it,
    the next before, the next after... A file a commit added since the last release is only in
    the releases after it (astropy's `eopc04.1962-now`, new in 5.3, at a 5.3 development commit),
    a file that has long been there is in the one just before: both are among the first tried."""

    try:
        times = fetch_upload_times(name)
    except (OSError, ValueError):
        return []
    ordered = sorted(times, key=lambda v: times[v])
    if not when:
        return ordered[::-1][:MAX_RELEASES]
    before = [v for v in ordered if times[v] <= when][::-1]
    after = [v for v in ordered if times[v] > when]
    alternating = [v for pair in zip_longest(before, after) for v in pair if v is not None]
    return alternating[:MAX_RELEASES]


@dataclass
class ReleaseFiles:
    exact: dict[str, bytes] = field(default_factory=dict)       # blob id -> content, the id matching
    same_path: dict[str, bytes] = field(default_factory=dict)   # path -> content of another version


def _blobs_in_release(name: str, version: str, wanted: list[tuple[str, str]]) -> ReleaseFiles:
    """The wanted files one release's sdist holds: with the right blob id, or at the same path."""

    files = ReleaseFiles()
    with tempfile.TemporaryDirectory(prefix="issuebench-blobs-") as tmp:
        try:
            sdist = download_sdist(name, version, Path(tmp))
        except Exception:
            return files
        if sdist is None:
            return files
        by_path = {p: s for p, s in wanted}
        for member, read in _members(sdist):
            # An sdist's members sit under `name-version/`; match on the path inside the project.
            inner = member.split("/", 1)[-1]
            sha = by_path.get(inner)
            if sha is None:
                continue
            data = read()
            if git_blob_id(data) == sha:
                files.exact[sha] = data
            else:
                files.same_path[inner] = data
        return files


def _members(archive: Path):  # type: ignore[no-untyped-def]
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if not info.is_dir():
                    yield info.filename, (lambda info=info: zf.read(info))
    else:
        with tarfile.open(archive) as tf:
            for member in tf:
                if member.isfile():
                    yield member.name, (lambda member=member: tf.extractfile(member).read())  # type: ignore[union-attr]


def fill_exported(source: Path, commit: str, repo: str, when: str | None, dest: Path) -> list[str]:
    """Write into `dest` (an export of `commit` that left out the files the clone lacks) each such
    file a release holds: its own bytes, else the nearest release's version (a stand-in). Setup
    judges environments on such exports; without astropy's 4 MiB IERS table every time test
    fails and no environment is accepted. Returns the paths written."""
    completion = complete(source, commit, repo, when)
    if completion.store is None:
        return []
    by_path = {path: blob for path, blob in completion.filled}
    by_path.update({path: blob for path, blob, _ in completion.stand_ins})
    for path, blob in by_path.items():
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(read_blob(completion.store, blob))
    return sorted(by_path)
