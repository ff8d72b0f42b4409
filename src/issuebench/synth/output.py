"""What a synth run writes: the tasks repository, SWE-bench rows, the candidate log and yield.json.

DIR/repos/<owner__name>  a bare clone of the source plus one commit per kept task (the broken
                         tree, child of the source commit, under refs/heads/synth/<task>)
DIR/tasks.jsonl          one SWE-bench row per kept task (gold patch = the fix, test patch empty)
DIR/candidates.jsonl     one line per candidate decided, so a rerun resumes where it stopped
DIR/yield.json           the yield table per generator, times and rates
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
from collections import Counter
from pathlib import Path

from issuebench.errors import IssuebenchError
from issuebench.synth.base import Candidate
from issuebench.synth.validate import STATUSES

_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "HOME": "/nonexistent",
            "PATH": "/usr/local/bin:/usr/bin:/bin", "GIT_AUTHOR_NAME": "issuebench synth",
            "GIT_AUTHOR_EMAIL": "synth@issuebench", "GIT_COMMITTER_NAME": "issuebench synth",
            "GIT_COMMITTER_EMAIL": "synth@issuebench"}


def git(repo: Path, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> str:
    proc = subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=repo, capture_output=True, text=True,
                          env={**_GIT_ENV, **(env or {})}, input=input)
    if proc.returncode != 0:
        raise IssuebenchError(f"git {' '.join(args[:2])} failed in {repo}: {proc.stderr.strip()[-300:]}")
    return proc.stdout


class TasksRepo:
    """The repository `eval --repos DIR/repos` finds the tasks' broken commits in."""

    def __init__(self, path: Path, source: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        if not (path / "HEAD").is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            git(path.parent, "clone", "--quiet", "--bare", str(source.resolve()), str(path))

    def commit_broken(self, base: str, cand: Candidate, ref: str) -> str:
        """Commit the candidate's files on top of base; the commit carries base's date (reproducible)."""
        with self._lock:
            date = git(self.path, "show", "-s", "--format=%cI", base).strip()
            fd, index = tempfile.mkstemp(prefix="synth-index-")
            os.close(fd)
            env = {"GIT_INDEX_FILE": index, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
            try:
                git(self.path, "read-tree", base, env=env)
                for change in cand.changes:
                    blob = git(self.path, "hash-object", "-w", "--stdin", input=change.after).strip()
                    mode = self._mode(base, change.path)
                    git(self.path, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{change.path}", env=env)
                tree = git(self.path, "write-tree", env=env).strip()
            finally:
                os.unlink(index)
            sha = git(self.path, "commit-tree", tree, "-p", base, "-m", "issuebench synth task", env=env).strip()
            git(self.path, "update-ref", f"refs/heads/synth/{ref}", sha)
            return sha

    def _mode(self, base: str, path: str) -> str:
        line = git(self.path, "ls-tree", base, "--", path).split()
        return line[0] if line else "100644"

    def gold_patch(self, broken: str, base: str) -> str:
        """The fix: the diff that takes the broken tree back to the working one."""
        return git(self.path, "diff", "--no-color", "--no-ext-diff", broken, base)


class CandidateLog:
    """Append-only record of decided candidates; read back on resume."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.done: dict[str, dict] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a line cut by a kill
                if row.get("retry"):  # the machinery failed it (a lost worker): decide it again
                    continue
                self.done[row["id"]] = row

    def add(self, row: dict) -> None:
        with self._lock:
            self.done[row["id"]] = row
            with self.path.open("a") as fh:
                fh.write(json.dumps(row) + "\n")


def append_row(path: Path, row: dict, lock: threading.Lock) -> None:
    with lock, path.open("a") as fh:
        fh.write(json.dumps(row) + "\n")


def yield_table(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Per generator: candidates and how many ended in each status; plus a total row."""
    table: dict[str, Counter] = {}
    for row in rows:
        for key in (row["generator"], "total"):
            table.setdefault(key, Counter())
            table[key]["candidates"] += 1
            table[key][row["status"]] += 1
    return {gen: {"candidates": c["candidates"], **{s.value: c[s] for s in STATUSES}}
            for gen, c in sorted(table.items(), key=lambda kv: (kv[0] == "total", kv[0]))}
