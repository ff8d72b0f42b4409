"""Approximate base commits for SWE-bench tasks whose repository is out of reach: release sdists.

For a task of version X.Y the candidates are the sdists of the releases (pre-releases included)
of X.Y and of the series before it published before the task, newest first, then X.Y's releases
after the task (see `candidates`).
Each candidate becomes one dated commit (tag v<release>) in a plain git repository per project, so
one `--repos` folder serves every task. A candidate is taken when the gold patch and then the test
patch apply to a fresh clone of that commit through `issuebench.patch.apply_patch`, the engine
`issuebench eval` itself applies patches with; the method each needed is recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from issuebench.collect.pypi_history import extract_sdist
from issuebench.index.fetch import SDIST_SUFFIXES, index_url
from issuebench.models import Task
from issuebench.patch import apply_patch
from issuebench.patch.parse import parse_patch

GIT_ID = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
          "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


@dataclass(frozen=True)
class SdistFile:
    version: Version
    filename: str
    url: str
    sha256: str | None
    uploaded: str  # ISO 8601, as the index states it


def _iso(text: str) -> str:
    """Comparable UTC timestamp text (the index and the datasets spell time zones differently)."""
    return text.replace("Z", "").replace("+00:00", "")[:19]


def sdist_files(project: str) -> list[SdistFile]:
    """Every sdist the index lists for `project`, one per version, with its upload time.

    The JSON simple page (PEP 691/700) gives versions, pre-releases and upload times in one
    request, so candidates are ordered by date without downloading them."""
    page = index_url().rstrip("/") + f"/{canonicalize_name(project)}/"
    request = urllib.request.Request(page, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        data = json.load(response)
    found: dict[Version, SdistFile] = {}
    for entry in data.get("files", []):
        name = entry["filename"]
        suffix = next((s for s in SDIST_SUFFIXES if name.lower().endswith(s)), None)
        if suffix is None or not entry.get("upload-time"):
            continue
        dist, _, text = name[: -len(suffix)].rpartition("-")
        if canonicalize_name(dist) != canonicalize_name(project):
            continue
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if not version.is_devrelease:
            found.setdefault(version, SdistFile(version, name, entry["url"],
                                                entry.get("hashes", {}).get("sha256"), entry["upload-time"]))
    return list(found.values())


def _series(v: Version) -> tuple[int, ...]:
    return (*v.release, 0)[:2]


def candidates(files: list[SdistFile], series: str, created_at: str | None, limit: int) -> list[SdistFile]:
    """Releases to try as a task's base, nearest first.

    A release published before the task cannot hold its fix, so those come first, newest first:
    the task's own series X.Y and the series before it (a task on the development branch of X.Y
    predates X.Y.0, and the previous series' releases were cut from that branch). Then X.Y's
    releases after the task, oldest first: they may already hold the fix (gold then fails to
    apply, and the next candidate is tried)."""
    try:
        want = _series(Version(series))
    except InvalidVersion:
        return []
    known = sorted({_series(f.version) for f in files})
    previous = max((s for s in known if s < want), default=None)
    when = _iso(created_at or "9999")
    dated = sorted(files, key=lambda f: _iso(f.uploaded))
    before = [f for f in dated if _iso(f.uploaded) < when and _series(f.version) in (want, previous)][::-1]
    after = [f for f in dated if _iso(f.uploaded) >= when and _series(f.version) == want]
    return (before + after)[:limit]


def download(f: SdistFile, cache: Path) -> Path:
    path = cache / f.filename
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(f.url, timeout=300) as response:
            data = response.read()
        if f.sha256 and hashlib.sha256(data).hexdigest() != f.sha256:
            raise OSError(f"{f.filename}: sha256 does not match the index")
        path.with_suffix(".part").write_bytes(data)
        path.with_suffix(".part").rename(path)
    return path


def _git(repo: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    proc = subprocess.run(["git", f"--git-dir={repo / '.git'}", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def release_commit(repo: Path, f: SdistFile, sdist: Path) -> str:
    """The commit (tag v<release>) holding the sdist's tree exactly, made once per release.

    Built with a private index and plumbing, so commits never depend on what is checked out.
    The tag is named as most projects name theirs, so git-derived versions (setuptools_scm)
    read the release's own version."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, capture_output=True)
    tag = f"v{f.version}"
    try:
        return _git(repo, "rev-parse", "--verify", "-q", f"refs/tags/{tag}^{{commit}}")
    except subprocess.CalledProcessError:
        pass
    if not sdist.name.endswith(".zip"):
        _fast_import(repo, f, sdist, tag)
        sha = _git(repo, "rev-parse", f"refs/tags/{tag}^{{commit}}")
        _git(repo, "update-ref", "refs/heads/main", sha)
        return sha
    with tempfile.TemporaryDirectory(prefix="ib-sdist-") as tmp:
        tree = extract_sdist(sdist, Path(tmp) / "x")
        env = {**os.environ, **GIT_ID, "GIT_INDEX_FILE": str(Path(tmp) / "index"),
               "GIT_AUTHOR_DATE": f.uploaded, "GIT_COMMITTER_DATE": f.uploaded}
        _git(repo, f"--work-tree={tree}", "add", "-A", "-f", ".", env=env, cwd=tree)
        tree_sha = _git(repo, "write-tree", env=env)
        sha = _git(repo, "commit-tree", tree_sha, "-m", f"{f.filename} (release sdist)", env=env)
    _git(repo, "tag", tag, sha)
    _git(repo, "update-ref", "refs/heads/main", sha)
    return sha


def _fast_import(repo: Path, f: SdistFile, sdist: Path, tag: str) -> None:
    """Stream a tar sdist straight into one parentless commit on refs/tags/<tag>.

    Several times faster than extracting and `git add`-ing thousands of files on a busy machine."""
    when = int(datetime.fromisoformat(f.uploaded.replace("Z", "+00:00")).timestamp())
    message = f"{f.filename} (release sdist)".encode()
    proc = subprocess.Popen(["git", f"--git-dir={repo / '.git'}", "fast-import", "--quiet"],
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    out = proc.stdin
    out.write(f"commit refs/tags/{tag}\nauthor bench <bench@example.com> {when} +0000\n"
              f"committer bench <bench@example.com> {when} +0000\ndata {len(message)}\n".encode() + message + b"\n")
    with tarfile.open(sdist) as tf:
        for member in tf:
            parts = member.name.split("/", 1)
            if len(parts) < 2 or not parts[1] or ".." in parts[1].split("/"):
                continue
            if member.issym():
                mode, data = "120000", member.linkname.encode()
            elif member.isfile():
                mode = "100755" if member.mode & 0o111 else "100644"
                data = tf.extractfile(member).read()  # type: ignore[union-attr]
            else:
                continue
            out.write(f'M {mode} inline "{_quote(parts[1])}"\ndata {len(data)}\n'.encode() + data + b"\n")
    out.close()
    if proc.wait() != 0:
        raise OSError(f"git fast-import failed for {sdist.name}: {proc.stderr.read().decode()[:200]}")  # type: ignore[union-attr]


def _quote(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def patches_apply(repo: Path, sha: str, task: Task) -> tuple[bool, str]:
    """Whether gold, then the test patch on top, apply to a clone at `sha`, and the methods used."""
    with tempfile.TemporaryDirectory(prefix="ib-apply-") as tmp:
        ws = Path(tmp) / "ws"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(ws)],
                       check=True, capture_output=True)
        # Only the files the patches name are checked out: a whole django tree costs minutes here.
        paths = sorted({p for text in (task.patch, task.test_patch) for fp in parse_patch(text or "")
                        for p in (fp.path_old, fp.path_new) if p})
        subprocess.run(["git", "-C", str(ws), "sparse-checkout", "set", "--no-cone", *[f"/{p}" for p in paths]],
                       check=True, capture_output=True)
        subprocess.run(["git", "-C", str(ws), "checkout", "-q", sha], check=True, capture_output=True)
        methods = []
        for label, text in (("gold", task.patch), ("test", task.test_patch)):
            result = apply_patch(ws, text)
            if not result.applied:
                return False, f"{label}: {result.reason[:160]}"
            methods.append(f"{label}={result.method}" + (" (fuzz)" if result.status.value != "applied" else ""))
        return True, ", ".join(methods)


def find_base(task: Task, project: str, files: list[SdistFile], work: Path, limit: int) -> dict:
    """Try the task's candidate releases in order; the first both patches apply to exactly is its
    base. A fuzzed application is kept only when no candidate takes both exactly: fuzz can land a
    hunk in the wrong place (seen: a test file left with an IndentationError)."""
    repo = work / "repos" / task.repo.replace("/", "__")
    tried: list[str] = []
    fuzzy: dict | None = None
    for f in candidates(files, task.version or "", task.created_at, limit):
        try:
            sha = release_commit(repo, f, download(f, work / "downloads" / project))
        except (OSError, subprocess.CalledProcessError) as exc:
            tried.append(f"{f.version}: {str(exc)[:80]}")
            continue
        ok, how = patches_apply(repo, sha, task)
        when = "before" if _iso(f.uploaded) < _iso(task.created_at or "9999") else "after"
        found = {"reproducible": True, "release": str(f.version), "base": sha, "methods": how,
                 "release_vs_task": when, "tried": list(tried)}
        if ok and "(fuzz)" not in how:
            return found
        if ok and fuzzy is None:
            fuzzy = found
        tried.append(f"{f.version} ({when}): {how}")
    return fuzzy or {"reproducible": False, "tried": tried}
