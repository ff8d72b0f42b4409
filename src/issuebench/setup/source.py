"""Read a repository's files at one commit (git clone), or as they are (a source folder).

Extraction reads through this, never through the working tree of a clone, so a setup for an old
commit sees that commit's files; `export` writes the same files into a fresh workspace.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from issuebench import config
from issuebench.errors import InputError, IssuebenchError
from issuebench.harness import fill_exported, missing_blobs

# Folders never worth reading for setup facts (vendored code, caches, environments).
_SKIP_DIRS = {".git", ".hg", ".tox", ".nox", ".venv", "venv", "env", "node_modules", "__pycache__",
              ".mypy_cache", ".pytest_cache", "build", "dist", ".eggs", "site-packages"}
_MAX_FILE_BYTES = 400_000


def _git(repo: Path, *args: str, text: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=text, check=False)


def _is_bare(root: Path) -> bool:
    """A bare clone (HEAD and objects/ at its top, no work tree)."""
    if not ((root / "HEAD").is_file() and (root / "objects").is_dir()):
        return False
    return _git(root, "rev-parse", "--is-bare-repository").stdout.strip() == "true"


@dataclass
class SourceTree:
    """A repository snapshot: a git clone at `commit`, or a plain folder when commit is None."""

    root: Path
    commit: str | None = None
    _files: list[str] | None = field(default=None, repr=False)
    # The folder name as the user gave it (a fetched clone may be a symlink to a folder named "repo").
    given_name: str | None = None
    _missing: list[str] | None = field(default=None, repr=False)

    @classmethod
    def open(cls, src: str | Path, commit: str | None = None, clone_dir: Path | None = None) -> SourceTree:
        """Open a local clone, a source folder, or clone a URL (network needed) into clone_dir."""
        text = str(src)
        if "://" in text or text.startswith("git@"):
            return cls._clone(text, commit, clone_dir)
        given = Path(src).expanduser()
        root = given.resolve()
        if not root.is_dir():
            raise InputError(root, "not a folder", hint="give a git clone, an unpacked source folder or a URL")
        if (root / ".git").exists() or _is_bare(root):
            rev = _git(root, "rev-parse", "--verify", f"{commit or 'HEAD'}^{{commit}}")
            if rev.returncode != 0:
                if commit:
                    raise InputError(root, f"commit {commit!r} not found in this clone",
                                     hint="fetch it first, or pass a commit that `git log` shows")
                # A freshly initialised repository without commits: read it as a folder.
                return cls(root, None, given_name=given.absolute().name)
            return cls(root, rev.stdout.strip(), given_name=given.absolute().name)
        if commit:
            raise InputError(root, "--commit given but the folder is not a git clone")
        return cls(root, None, given_name=given.absolute().name)

    @classmethod
    def _clone(cls, url: str, commit: str | None, clone_dir: Path | None) -> SourceTree:

        base = clone_dir or config.repos_cache_dir()
        name = url.rstrip("/").removesuffix(".git").rsplit("/", 2)
        dest = base / "__".join(name[-2:])
        if not dest.exists():
            done = subprocess.run(["git", "clone", "--quiet", url, str(dest)], capture_output=True,
                                  text=True, check=False)
            if done.returncode != 0:
                raise IssuebenchError(f"cannot clone {url}: {done.stderr.strip()[-300:]}",
                                      hint="check the URL and the network, or clone it yourself and pass the folder")
        return cls.open(dest, commit)

    # -- reading -----------------------------------------------------------------------------

    def files(self) -> list[str]:
        """Every file path (POSIX, relative to the root)."""
        if self._files is None:
            if self.commit:
                out = _git(self.root, "ls-tree", "-r", "--name-only", self.commit).stdout
                self._files = [line for line in out.splitlines() if line]
            else:
                found = []
                for dirpath, dirnames, filenames in os.walk(self.root):
                    dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
                    rel = Path(dirpath).relative_to(self.root)
                    found.extend((rel / name).as_posix() for name in filenames)
                self._files = sorted(found)
        return self._files

    def exists(self, path: str) -> bool:
        return path in set(self.files())

    def dirs(self) -> set[str]:
        """Every folder that holds at least one file."""
        out: set[str] = set()
        for path in self.files():
            parts = path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                out.add("/".join(parts[:i]))
        return out

    def read(self, path: str) -> str | None:
        """The text of a file, or None when absent, binary or too large."""
        if self.commit:
            done = _git(self.root, "show", f"{self.commit}:{path}", text=False)
            if done.returncode != 0:
                return None
            data = done.stdout
        else:
            target = self.root / path
            if not target.is_file() or target.stat().st_size > _MAX_FILE_BYTES:
                return None
            data = target.read_bytes()
        if len(data) > _MAX_FILE_BYTES or b"\0" in data[:4096]:
            return None
        return data.decode("utf-8", errors="replace")

    # -- facts about the snapshot ------------------------------------------------------------

    def date(self) -> str | None:
        """ISO date of the commit; for a folder, of its newest file (an sdist keeps mtimes)."""
        if self.commit:
            out = _git(self.root, "show", "-s", "--format=%cI", self.commit).stdout.strip()
            return out or None
        newest = 0.0
        for path in self.files():
            try:
                newest = max(newest, (self.root / path).stat().st_mtime)
            except OSError:
                continue
        if not newest:
            return None
        return dt.datetime.fromtimestamp(newest, tz=dt.timezone.utc).isoformat(timespec="seconds")

    def _fill_missing(self, dest: Path) -> None:
        """The files the clone lacks, from the project's releases where they hold them (a fetched
        snapshot leaves out files of 4 MiB and more); what none holds stays absent."""
        try:
            fill_exported(self.root, str(self.commit), self.repo_name(), self.date(), dest)
        except (OSError, IssuebenchError):
            return   # the index cannot be reached: the export goes on without them

    def repo_name(self) -> str:
        """owner/name from the origin remote when there is one, else the folder name (a fetched
        clone's `owner__name` read as owner/name)."""
        if self.commit:
            url = _git(self.root, "remote", "get-url", "origin").stdout.strip()
            if "://" in url or re.match(r"^[\w.-]+@[\w.-]+:", url):   # not a clone of a local folder
                parts = url.rstrip("/").removesuffix(".git").replace(":", "/").split("/")
                return "/".join(parts[-2:])
        name = (self.given_name or self.root.name).removesuffix(".git")
        return name.replace("__", "/", 1) if "__" in name else name

    def nearest_tag(self) -> str | None:
        """The nearest tag reachable from the commit: what a git-computed version is based on."""
        if not self.commit:
            return None
        done = _git(self.root, "describe", "--tags", "--abbrev=0", self.commit)
        tag = done.stdout.strip() if done.returncode == 0 else ""
        return tag or None

    def missing_files(self) -> list[str]:
        """Files of the commit whose content the clone lacks (a snapshot that left out large files)."""
        if not self.commit:
            return []
        if self._missing is None:

            self._missing = sorted(path for path, _ in missing_blobs(self.root, self.commit))
        return self._missing

    def export(self, dest: Path) -> Path:
        """Write the snapshot's files into dest (created), the workspace tests run in."""
        dest.mkdir(parents=True, exist_ok=True)
        if self.commit:
            with tempfile.TemporaryDirectory() as tmp:
                archive = Path(tmp) / "tree.tar"
                done = _git(self.root, "archive", "--format=tar", "-o", str(archive), self.commit)
                if done.returncode != 0 and self.missing_files():
                    # A fetched snapshot leaves out its largest files: export the rest.
                    excluded = [f":(exclude){path}" for path in self.missing_files()]
                    done = _git(self.root, "archive", "--format=tar", "-o", str(archive), self.commit,
                                "--", ".", *excluded)
                if done.returncode != 0:
                    raise IssuebenchError(f"{self.root}: git archive failed: {done.stderr.strip()[-300:]}")
                with tarfile.open(archive) as tar:
                    tar.extractall(dest, filter=_inside_the_tree)
            if self.missing_files():
                self._fill_missing(dest)
            # Tools such as setuptools-scm read the version from git: give them a repository,
            # tagged with the commit's nearest tag, or the project calls itself 0.1.dev1 and its
            # own version checks (pytest's `minversion`, say) stop every run.
            for args in (["init", "-q"], ["add", "-A"],
                         ["-c", "user.name=issuebench", "-c", "user.email=setup@issuebench",
                          "commit", "-q", "--no-verify", "-m", "snapshot"]):
                _git(dest, *args)
            tag = self.nearest_tag()
            if tag:
                _git(dest, "tag", tag, "HEAD")
        else:
            shutil.copytree(self.root, dest, dirs_exist_ok=True, symlinks=True,
                            ignore=shutil.ignore_patterns(".git", ".tox", ".nox", ".venv", "__pycache__"))
        return dest


def _inside_the_tree(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's `data` filter, except that a member it refuses is left out instead of stopping the
    export: a symbolic link to an absolute path (TatSu's RULES.md points into its author's home)
    dangles on any other machine, and no file of the tree may point out of it."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None
