"""Git submodules a fetched snapshot lacks, filled from the submodule's own local clone at the
commit the base commit records (recipe data: `submodules = {"modules/oniguruma" = "kkos/oniguruma"}`).

A repository that vendors a library as a submodule (jq's oniguruma, micropython's lib/*) builds
and tests it from that folder; its tests are part of the suite (jq's `make check` runs
oniguruma's). The folder's files come from the clone found like any repository's (--repos-dir),
exported at the recorded commit, never fetched at run time; what cannot be filled is said.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from issuebench.errors import IssuebenchError
from issuebench.repos import find_repo, git


def recorded_commit(ws: Path, base_commit: str, path: str) -> str | None:
    """The commit the base commit's tree records for the submodule at `path` (None: no gitlink)."""
    out = git(ws, "ls-tree", base_commit, "--", path, check=False).stdout.split()
    return out[2] if len(out) >= 3 and out[1] == "commit" else None


def fill_submodules(submodules: dict[str, str], ws: Path, base_commit: str, repos_dir: Path | None,
                    allow_clone: bool) -> list[str]:
    """Fill each submodule folder; one note per submodule, filled or not and why."""
    notes = []
    for path, repo in submodules.items():
        commit = recorded_commit(ws, base_commit, path)
        if commit is None:
            notes.append(f"submodule {path}: the base commit records none there")
            continue
        try:
            source = find_repo(repo, repos_dir, allow_clone=allow_clone)
        except IssuebenchError as exc:
            notes.append(f"submodule {path} not filled: no clone of {repo} ({exc.message})")
            continue
        target = ws / path
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(source), "archive", "--format=tar", commit],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            notes.append(f"submodule {path} not filled: {commit[:12]} is not in the clone of {repo}")
            continue
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
        notes.append(f"submodule {path} filled from {repo} at {commit[:12]}")
    return notes
