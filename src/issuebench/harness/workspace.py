"""Per-instance workspaces: the repository at the base commit, and nothing after it.

A workspace is a fresh repository holding one shallow commit, fetched from the local source clone.
That is cheap (one tree's objects, no history), self-contained (git works inside the sandbox,
where the source clone is not mounted), and shows the code under test no commit after the base.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from issuebench import config
from issuebench.content_store import STORE, copy_unlinked, share_files, sweep_store
from issuebench.errors import IssuebenchError
from issuebench.harness.blob_completion import Completion, complete, missing_blobs, read_blob
from issuebench.harness.prebuilt import remove_layers
from issuebench.models import stable_hash
from issuebench.procs import pid_alive
from issuebench.repos import changed_paths, git, reset_paths  # noqa: F401 (the harness reads them here)

# Pristine checkouts kept for reuse: copying one is several times cheaper than fetching and
# checking out again, and every prediction for a task (and every rerun) starts from the same one,
# with the bytecode and build products kept in it. Enough for a whole dataset's pass: under a
# smaller cap, a pass over more tasks than the cap makes every checkout again in every step (and
# builds its products again). Sharing their alike files keeps them small: 2.03 GiB for 211
# checkouts of thirteen repositories (docs/benchmarks.md).
MAX_TEMPLATES = int(os.environ.get("ISSUEBENCH_MAX_TEMPLATES", "1024"))
# Part of a template's key: a checkout made by older rules (before stand-ins for files no release
# holds byte for byte) is not reused, it is made again.
TEMPLATE_FORMAT = "2"


def create_workspace(source: Path, base_commit: str, parent: Path | None = None, *,
                     repo: str | None = None, when: str | None = None) -> Path:
    """Make a fresh workspace at base_commit from the local clone `source`.

    `repo` ("owner/name") and `when` (the task's date) let a clone that lacks some of the commit's
    files be completed from the project's releases (missing_blobs.py).
    """
    parent = parent or config.workspaces_dir()
    parent.mkdir(parents=True, exist_ok=True)
    template = _template(source, base_commit, repo, when)
    ws = Path(tempfile.mkdtemp(prefix=f"ws-{os.getpid()}-", dir=parent))
    # A checkout's files are links into a store shared by every checkout: the workspace's own
    # files must be its own to change.
    proc = copy_unlinked(template, ws)
    if proc.returncode != 0:
        shutil.rmtree(ws, ignore_errors=True)
        raise IssuebenchError(f"could not copy the checkout of {base_commit[:12]}: {proc.stderr.strip()[-300:]}")
    os.utime(template)  # recently used: kept when older templates are evicted
    return ws


def pristine_checkout(source: Path, base_commit: str, repo: str | None = None) -> Path:
    """Where the pristine checkout that create_workspace copies for this commit is (made or not)."""
    # With the repository named, a clone lacking files can be completed from its releases: another checkout.
    key = stable_hash([str(source.resolve()), base_commit, *([repo] if repo else []), TEMPLATE_FORMAT])[:24]
    return config.home() / "templates" / key


def _template(source: Path, base_commit: str, repo: str | None = None, when: str | None = None) -> Path:
    template = pristine_checkout(source, base_commit, repo)
    root, key = template.parent, template.name
    root.mkdir(parents=True, exist_ok=True)
    if (template / ".git").is_dir():
        return template
    with (root / f".{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (template / ".git").is_dir():
            fresh = _checkout(source, base_commit, root, repo, when)
            share_files(fresh, root / STORE)
            # A template half removed by an eviction elsewhere (its .git gone first) is no template.
            shutil.rmtree(template, ignore_errors=True)
            os.rename(fresh, template)
            _evict_templates(root, keep=template)
    return template


def _evict_templates(root: Path, keep: Path) -> None:
    templates = sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
                       key=lambda p: p.stat().st_mtime)
    evicted = [old for old in templates[: max(0, len(templates) - MAX_TEMPLATES)] if old != keep]
    for old in evicted:
        shutil.rmtree(old, ignore_errors=True)
        remove_layers(old)
    if evicted:
        sweep_store(root / STORE)


def _checkout(source: Path, base_commit: str, parent: Path, repo: str | None = None,
              when: str | None = None) -> Path:
    """A new repository holding only base_commit, checked out, in a fresh folder under parent."""
    ws = Path(tempfile.mkdtemp(prefix=".new-", dir=parent))
    try:
        git(ws, "init", "--quiet")
        # safe.directory: a clone unpacked as root from a tarball belongs to another user.
        upload = ("git -c safe.directory=* -c uploadpack.allowAnySHA1InWant=true "
                  "-c uploadpack.allowReachableSHA1InWant=true upload-pack")
        completion = _complete_missing(source, base_commit, repo, when)
        if completion.store is not None:
            upload = f"env GIT_ALTERNATE_OBJECT_DIRECTORIES={shlex.quote(str(completion.store))} {upload}"
        fetch = ["fetch", "--quiet", "--depth=1", "--no-tags"]
        if completion.missing:
            # Files no release holds either: the workspace gets every other file (a partial fetch, then
            # a checkout that leaves those out), and only a run that reads one of them fails.
            fetch += _leave_out(ws, completion.missing)
            upload = upload.replace("upload-pack", "-c uploadpack.allowFilter=true upload-pack")
        notes = _completion_notes(completion, base_commit)
        if notes:
            (ws / ".git" / NOTES_FILE).write_text("".join(f"{n}\n" for n in notes))
        proc = _fetch(ws, fetch, upload, source, base_commit, partial=bool(completion.missing))
        if proc.returncode != 0:
            raise IssuebenchError(f"base commit {base_commit[:12]} is not in {source}",
                                  hint="update the clone (git fetch) or check the task's base_commit")
        git(ws, "checkout", "--quiet", "--detach", "FETCH_HEAD")
        if completion.missing:
            _forget_promisor(ws)
        _write_stand_ins(ws, completion)
        _carry_nearest_tag(source, base_commit, ws)
        # A workspace never points back at its source: no remotes, no stray refs.
        shutil.rmtree(ws / ".git" / "refs" / "remotes", ignore_errors=True)
        return ws
    except BaseException:
        shutil.rmtree(ws, ignore_errors=True)
        raise


NOTES_FILE = "issuebench-notes"


def _completion_notes(completion: Completion, base_commit: str) -> list[str]:
    """What the completion of a clone that lacks files did, for the instance's result."""
    notes = []
    if completion.filled:
        notes.append(f"{len(completion.filled)} files the clone lacks ({_paths(completion.filled)}) taken "
                     f"from the project's release sdists ({', '.join(completion.sources) or 'stored earlier'}), "
                     "each matching the commit's own blob id")
    stood_in = {path for path, _, _ in completion.stand_ins}
    lacking = [m for m in completion.missing if m[0] not in stood_in]
    if lacking:
        notes.append(f"the clone lacks {len(lacking)} files of {base_commit[:12]} ({_paths(lacking)}) and "
                     "no release sdist holds them: the workspace has every other file; a test that reads "
                     "one of them fails")
    for path, _, release in completion.stand_ins:
        notes.append(f"the clone lacks {path} of {base_commit[:12]} and no release holds its bytes: the "
                     f"workspace has release {release}'s version of it, a stand-in, not the commit's own")
    return notes


def _write_stand_ins(ws: Path, completion: Completion) -> None:
    if not completion.stand_ins or completion.store is None:
        return
    # Left out of the checkout (skip-worktree): git keeps seeing no change there, so a diff of the
    # workspace never carries the stand-in, once git is told such files are expected.
    git(ws, "config", "sparse.expectFilesOutsideOfPatterns", "true")
    for path, blob, _ in completion.stand_ins:
        target = ws / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(read_blob(completion.store, blob))


def _complete_missing(source: Path, base_commit: str, repo: str | None, when: str | None) -> Completion:
    """Fill in what the clone lacks of the commit; `missing` says which files cannot be had."""
    missing = missing_blobs(source, base_commit)
    if not missing:
        return Completion(None, [])
    return complete(source, base_commit, repo, when) if repo else Completion(None, missing)


def _paths(entries: list[tuple[str, str]]) -> str:
    more = f", ... ({len(entries) - 3} more)" if len(entries) > 3 else ""
    return ", ".join(p for p, _ in entries[:3]) + more


def _leave_out(ws: Path, missing: list[tuple[str, str]]) -> list[str]:
    """Set the workspace up to check out everything but `missing`; the fetch's extra arguments."""
    git(ws, "config", "core.sparseCheckout", "true")
    patterns = ["/*", *(f"!/{path}" for path, _ in missing)]
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "sparse-checkout").write_text("\n".join(patterns) + "\n")
    return ["--filter=blob:none"]


def _fetch(ws: Path, fetch: list[str], upload: str, source: Path, base_commit: str, *,
           partial: bool) -> subprocess.CompletedProcess[str]:
    if not partial:
        return git(ws, *fetch, f"--upload-pack={upload}", str(source.resolve()), base_commit, check=False)
    # A partial fetch needs a promisor remote, from which the checkout then takes the blobs it needs.
    git(ws, "remote", "add", "origin", str(source.resolve()))
    git(ws, "config", "remote.origin.promisor", "true")
    git(ws, "config", "remote.origin.partialclonefilter", "blob:none")
    git(ws, "config", "remote.origin.uploadpack", upload)
    return git(ws, *fetch, "origin", base_commit, check=False)


def _forget_promisor(ws: Path) -> None:
    """A workspace never points back at its source: the remote goes once the checkout is done."""
    git(ws, "remote", "remove", "origin", check=False)
    git(ws, "config", "--unset", "extensions.partialclone", check=False)


def workspace_notes(ws: Path) -> list[str]:
    """What the harness had to do to make the workspace (said in the instance's result)."""
    path = ws / ".git" / NOTES_FILE
    return path.read_text().splitlines() if path.is_file() else []


def _carry_nearest_tag(source: Path, base_commit: str, ws: Path) -> None:
    """Tag the base commit with the nearest tag reachable from it in the source clone.

    Versions computed from git (setuptools_scm, versioneer) need a tag; without one a project
    calls itself 0.1.dev1 and its own version checks fail (pytest's tox.ini `minversion`, say).
    The shallow workspace has no history to describe, so the base carries its nearest tag's name.
    """
    proc = git(source, "describe", "--tags", "--abbrev=0", base_commit, check=False)
    tag = proc.stdout.strip()
    if proc.returncode == 0 and tag:
        git(ws, "tag", tag, "HEAD", check=False)


def remove_workspace(ws: Path) -> None:
    shutil.rmtree(ws, ignore_errors=True)


def sweep_stale_workspaces(parent: Path | None = None) -> int:
    """Remove workspaces left by runs that were killed (their process is gone). Returns how many."""
    # Both places workspaces go (memory or the home's disk: the choice follows free memory).
    parents = [parent] if parent else list(dict.fromkeys([config.workspaces_dir(), config.home() / "work"]))
    removed = 0
    for ws in (ws for folder in parents for ws in folder.glob("ws-*-*")):
        pid = ws.name.split("-")[1]
        if pid.isdigit() and not pid_alive(int(pid)):
            # A killed run leaves its output file (ws-PID-x.out) beside the folders.
            if ws.is_dir() and not ws.is_symlink():
                shutil.rmtree(ws, ignore_errors=True)
            else:
                ws.unlink(missing_ok=True)
            removed += 1
    return removed
