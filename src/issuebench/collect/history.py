"""Walk a repository's history with ONE `git log` process.

One subprocess per commit costs ~2 ms each (thousands of commits = seconds); a single `git log`
with a custom format and `--name-only` streams every commit with its changed files at once.
Fields are separated by ASCII unit/record separators, which never occur in commit messages or
paths in practice, so messages with any text parse safely.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from issuebench.errors import IssuebenchError

_RS = "\x1e"  # starts each commit record
_US = "\x1f"  # separates the fields of a record
# sha, parents, author date, committer date, subject, body; files follow the last separator.
_FORMAT = f"{_RS}%H{_US}%P{_US}%aI{_US}%cI{_US}%s{_US}%b{_US}"


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author_date: str
    commit_date: str
    subject: str
    body: str
    # Paths changed against the first parent (for merges: the whole merged branch).
    files: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    @property
    def message(self) -> str:
        return f"{self.subject}\n\n{self.body}".strip()


def git(repo_dir: Path, *args: str, check: bool = True, input_text: str | None = None) -> str:
    """Run git in repo_dir and return stdout; a failure names the command and git's message."""
    proc = subprocess.run(
        ["git", "-c", "core.quotePath=false", *args], cwd=repo_dir, capture_output=True,
        text=True, errors="replace", input=input_text, check=False,
    )
    if check and proc.returncode != 0:
        raise IssuebenchError(
            f"git {' '.join(args[:3])} failed in {repo_dir}: {proc.stderr.strip()[:300]}",
            hint="check that the path is a git repository and the revision exists",
        )
    return proc.stdout


def walk_history(repo_dir: Path, *, rev: str = "HEAD", since: str | None = None,
                 until: str | None = None, first_parent: bool = True) -> Iterator[Commit]:
    """Yield commits newest first, each with the paths it changed against its first parent.

    first_parent=True follows the main line only: merged pull requests appear once (as their
    merge commit) instead of once per commit of the branch.
    """
    argv = ["git", "-c", "core.quotePath=false", "log", f"--format={_FORMAT}", "--name-only",
            "--no-renames", "--no-color"]
    if first_parent:
        argv += ["--first-parent", "--diff-merges=first-parent"]
    if since:
        argv.append(f"--since={since}")
    if until:
        argv.append(f"--until={until}")
    argv += [rev, "--"]
    proc = subprocess.Popen(argv, cwd=repo_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace")
    assert proc.stdout is not None
    pending = ""
    try:
        while chunk := proc.stdout.read(1 << 16):
            pending += chunk
            records = pending.split(_RS)
            pending = records.pop()  # the last record may be incomplete
            for record in records:
                if record:
                    yield _parse_record(record)
        if pending:
            yield _parse_record(pending)
    finally:
        proc.stdout.close()
        stderr = proc.stderr.read() if proc.stderr else ""
        code = proc.wait()
    if code != 0 and "does not have any commits" not in stderr:
        raise IssuebenchError(f"git log failed in {repo_dir}: {stderr.strip()[:300]}",
                              hint="check that the path is a git repository with commits")


def _parse_record(record: str) -> Commit:
    sha, parents, adate, cdate, subject, body, files_blob = record.split(_US, 6)
    files = tuple(_unquote(line) for line in files_blob.splitlines() if line.strip())
    return Commit(sha=sha, parents=tuple(parents.split()), author_date=adate, commit_date=cdate,
                  subject=subject, body=body.strip(), files=files)


def _unquote(path: str) -> str:
    """git quotes paths holding tabs, newlines or quotes as C strings, even with quotePath off."""
    if len(path) >= 2 and path[0] == path[-1] == '"':
        raw = path[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        return raw.encode("latin-1", "replace").decode("utf-8", "replace")
    return path


def commit_diff(repo_dir: Path, base: str, head: str) -> str:
    """The full diff base..head, in the form `git apply` and the harness expect."""
    return git(repo_dir, "diff", "--no-color", "--no-ext-diff", "--no-renames", "--binary",
               base, head)


def branch_commits_dates(repo_dir: Path, base: str, head: str) -> list[str]:
    """Author dates of the commits a merge brought in, oldest first."""
    out = git(repo_dir, "log", "--format=%aI", "--reverse", f"{base}..{head}", check=False)
    return [line for line in out.splitlines() if line]
