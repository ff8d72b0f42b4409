"""Build small real git repositories for tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = dict(GIT_ENV)
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def commit_files(repo: Path, files: dict[str, str | None], message: str, date: str | None = None) -> str:
    """Write (or delete, for None) files and commit them; returns the new commit's sha."""
    for rel, content in files.items():
        path = repo / rel
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD")


def init_repo(path: Path, files: dict[str, str], message: str = "initial", date: str | None = None) -> str:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return commit_files(path, files, message, date)


def diff_between(repo: Path, a: str, b: str, *paths: str) -> str:
    return git(repo, "diff", a, b, "--", *paths) + "\n"
