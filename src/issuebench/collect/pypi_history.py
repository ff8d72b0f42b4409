"""`repo from-pypi`: a git history with one commit per release, made from a project's sdists.

Many projects ship their tests in the sdist, so consecutive releases form real (code change,
test change) pairs, and the whole collect -> validate -> eval pipeline can run on real code where
only the package index is reachable. Each commit is dated at its release (the newest mtime among
the sdist's members, which the build tool stamps at release time) and tagged v<version>.
Packages are fetched with pip, so pip's configured index (and its proxy/cert settings) is used.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from packaging.utils import canonicalize_name

from issuebench import config
from issuebench.collect.history import git
from issuebench.errors import IssuebenchError
from issuebench.index import download_sdist, index_versions

# Files a build tool writes into an sdist; they change with every release and are no one's code.
_GENERATED = re.compile(r"(^|/)(PKG-INFO|[^/]+\.egg-info(/.*)?)$")


@dataclass
class Release:
    version: str
    sdist: Path
    date: datetime


def sdist_date(sdist: Path) -> datetime:
    """The release date: the newest mtime among the archive's members."""
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as zf:
            stamps = [datetime(*info.date_time, tzinfo=timezone.utc) for info in zf.infolist()]
    else:
        with tarfile.open(sdist) as tf:
            stamps = [datetime.fromtimestamp(m.mtime, tz=timezone.utc) for m in tf.getmembers()]
    if not stamps:
        raise IssuebenchError(f"{sdist.name} is an empty archive", hint="skip this release")
    return max(stamps)


def extract_sdist(sdist: Path, dest: Path) -> Path:
    """Unpack and return the project root (the archive's single top directory)."""
    dest.mkdir(parents=True, exist_ok=True)
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as zf:
            for info in zf.infolist():
                if info.filename.startswith("/") or ".." in Path(info.filename).parts:
                    raise IssuebenchError(f"{sdist.name}: unsafe member {info.filename!r}")
            zf.extractall(dest)
    else:
        with tarfile.open(sdist) as tf:
            tf.extractall(dest, filter="data")
    tops = list(dest.iterdir())
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else dest


def build_pypi_history(name: str, output: Path | None = None, *, max_releases: int | None = None,
                       progress: Callable[[str], None] | None = None) -> Path:
    """Make (or extend) a repository at output with one dated, tagged commit per release."""
    dest = output or config.repos_cache_dir() / f"pypi__{canonicalize_name(name)}"
    versions = index_versions(name)
    if max_releases:
        versions = versions[-max_releases:]
    if not (dest / ".git").exists():
        dest.mkdir(parents=True, exist_ok=True)
        git(dest, "init", "--quiet", "--initial-branch=main")
        git(dest, "config", "issuebench.repo", f"pypi/{canonicalize_name(name)}")
    done = set(git(dest, "tag", "--list", "v*").split())
    with tempfile.TemporaryDirectory(prefix="from-pypi-") as tmp:
        for version in versions:
            if f"v{version}" in done:
                continue
            sdist = download_sdist(name, version, Path(tmp) / "dl")
            if sdist is None:
                if progress:
                    progress(f"{version}: no sdist, skipped")
                continue
            _commit_release(dest, name, Release(version, sdist, sdist_date(sdist)), Path(tmp))
            if progress:
                progress(f"{version}: committed")
    if not git(dest, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip():
        raise IssuebenchError(f"no release of {name!r} has an sdist", hint="pick another project")
    return dest


def _commit_release(repo: Path, name: str, release: Release, tmp: Path) -> None:
    unpack = tmp / f"x-{release.version}"
    root = extract_sdist(release.sdist, unpack)
    for entry in repo.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for entry in root.iterdir():
        shutil.move(str(entry), repo / entry.name)
    shutil.rmtree(unpack, ignore_errors=True)
    for path in sorted(repo.rglob("*"), reverse=True):
        rel = path.relative_to(repo).as_posix()
        if not rel.startswith(".git/") and rel != ".git" and _GENERATED.search(rel):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    stamp = release.date.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
           "GIT_AUTHOR_NAME": f"{name} release", "GIT_AUTHOR_EMAIL": "release@localhost",
           "GIT_COMMITTER_NAME": "issuebench", "GIT_COMMITTER_EMAIL": "issuebench@localhost"}
    subprocess.run(["git", "add", "-A", "-f", "."], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "commit", "--quiet", "--allow-empty", "-m", f"{name} {release.version}"],
                   cwd=repo, env=env, check=True, capture_output=True)
    subprocess.run(["git", "tag", f"v{release.version}"], cwd=repo, env=env, check=True,
                   capture_output=True)


