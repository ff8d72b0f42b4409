"""The install overlay: build products carried to a workspace of another commit are rebuilt where
that commit's sources differ, and only there."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from issuebench.harness.overlay import ensure_env_with_overlay
from tests.gitrepo import commit_files, init_repo

# A make rule standing in for an in-place extension build: a product per source, rebuilt when
# the source is newer (what setuptools' build_ext and cythonize decide by).
MAKEFILE = "all: a.so b.so\n%.so: %.pyx\n\tcp $< $@\n"


@dataclass
class _Env:
    path: str


class _Spec:
    def env_hash(self) -> str:
        return "env1"


class _BuildsInPlace:
    """A builder whose install runs the in-place build in the workspace it is given."""

    def __init__(self, root: Path):
        self.root = root

    def ensure(self, spec, ws: Path) -> _Env:
        env = self.root / "env1"
        if not (env / "env.json").is_file():
            env.mkdir(parents=True, exist_ok=True)
            subprocess.run(["make", "-s"], cwd=ws, check=True)
            (env / "env.json").write_text("{}")
        return _Env(str(env))


def _checkout(repo: Path, commit: str, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(repo), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--detach", commit], check=True)
    return dest


@pytest.mark.parametrize("checkout_age", ["older than the build", "newer than the build"])
def test_products_are_rebuilt_only_where_the_task_commit_changed_their_source(tmp_path, checkout_age):
    repo = tmp_path / "repo"
    init_repo(repo, {"Makefile": MAKEFILE, "a.pyx": "a old\n", "b.pyx": "b\n", ".gitignore": "*.so\n"})
    build_commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                                  text=True, check=True).stdout.strip()
    task_commit = commit_files(repo, {"a.pyx": "a new\n"}, "a changes")
    builder = _BuildsInPlace(tmp_path / "envs")
    ensure_env_with_overlay(builder, _Spec(), _checkout(repo, build_commit, tmp_path / "build"))

    ws = _checkout(repo, task_commit, tmp_path / "task")
    # A kept pristine checkout may predate the build (then nothing would rebuild) or follow it
    # (then everything would).
    stamp = 1_000_000_000 if checkout_age == "older than the build" else time.time()
    for name in ("a.pyx", "b.pyx", "Makefile"):
        os.utime(ws / name, (stamp, stamp))
    ensure_env_with_overlay(builder, _Spec(), ws)

    assert (ws / "a.so").read_text() == "a old\n"  # the carried product, stale before the rebuild
    out = subprocess.run(["make", "-n"], cwd=ws, capture_output=True, text=True, check=True).stdout
    assert "cp a.pyx a.so" in out
    assert "b.so" not in out  # unchanged source: its carried product is kept
