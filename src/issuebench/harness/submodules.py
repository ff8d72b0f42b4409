"""Git submodules a fetched snapshot lacks, filled from the submodule's own local clone at the
commit the base commit records (recipe data: `submodules = {"modules/oniguruma" = "kkos/oniguruma"}`).

A repository that vendors a library as a submodule (jq's oniguruma, micropython's lib/*) builds
and tests it from that folder; its tests are part of the suite (jq's `make check` runs
oniguruma's). The folder's files come from the clone found like any repository's (--repos-dir),
exported at the recorded commit, never fetched at run time; what cannot be filled is said.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from issuebench.errors import IssuebenchError
from issuebench.harness.blob_completion import missing_blobs
from issuebench.repos import find_repo, git


def recorded_commit(ws: Path, base_commit: str, path: str) -> str | None:
    """The commit the base commit's tree records for the submodule at `path` (None: no gitlink)."""
    out = git(ws, "ls-tree", base_commit, "--", path, check=False).stdout.split()
    return out[2] if len(out) >= 3 and out[1] == "commit" else None


def fill_submodules(submodules: dict[str, str], ws: Path, base_commit: str, repos_dir: Path | None,
                    allow_clone: bool, *, holder: Path | None = None, moved: dict[str, str] | None = None) -> list[str]:
    """Fill each submodule folder; one note per submodule, filled or not and why. `holder` is the
    repository that holds base_commit when the workspace does not (setup's exported snapshot);
    `moved` the commits a test patch moves submodules to (the folder is emptied and filled again)."""
    notes = []
    for path, repo in submodules.items():
        commit = (moved or {}).get(path) or recorded_commit(holder or ws, base_commit, path)
        if commit is None:
            notes.append(f"submodule {path}: the base commit records none there")
            continue
        try:
            source = find_repo(repo, repos_dir, allow_clone=allow_clone)
        except IssuebenchError as exc:
            notes.append(f"submodule {path} not filled: no clone of {repo} ({exc.message})")
            continue
        target = ws / path
        if path in (moved or {}) and target.is_dir():
            shutil.rmtree(target)
        target.mkdir(parents=True, exist_ok=True)
        # A snapshot leaves out files of 4 MiB and more (mbedtls's generated test data): the
        # folder gets every file the clone holds, and the left-out ones are named.
        absent = missing_blobs(source, commit)
        excluded = [f":(exclude){name}" for name, _ in absent]
        archive = subprocess.run(["git", "-C", str(source), "archive", "--format=tar", commit, "--", ".", *excluded],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            notes.append(f"submodule {path} not filled: {commit[:12]} is not in the clone of {repo}")
            continue
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
        lacking = f" (without {len(absent)} files the clone lacks: {', '.join(n for n, _ in absent[:3])})" \
            if absent else ""
        notes.append(f"submodule {path} filled from {repo} at {commit[:12]}{lacking}")
    return notes
