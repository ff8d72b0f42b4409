"""Walk a repository's history with ONE `git log` process.

One subprocess per commit costs ~2 ms each (thousands of commits = seconds); a single `git log`
with a custom format and `--name-only` streams every commit with its changed files at once.
Fields are separated by ASCII unit/record separators, which never occur in commit messages or
paths in practice, so messages with any text parse safely.
"""

from __future__ import annotations

import subprocess
import tempfile
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


@dataclass(frozen=True)
class Node:
    """A commit of the graph: parents and times (epoch seconds) are all the base rules need."""

    parents: tuple[str, ...]
    author_time: int
    commit_time: int


_GRAPH_FORMAT = f"{_RS}%H{_US}%P{_US}%aI{_US}%cI{_US}%at{_US}%ct{_US}%ae{_US}%s{_US}%b"


@dataclass
class Graph:
    """Every commit reachable from the walked refs, newest first, in one `git log`."""

    commits: list[Commit]
    nodes: dict[str, Node]
    emails: dict[str, str]

    def first_parent_line(self, tip: str) -> list[str]:
        line: list[str] = []
        sha: str | None = tip
        while sha is not None and sha in self.nodes:
            line.append(sha)
            parents = self.nodes[sha].parents
            sha = parents[0] if parents else None
        return line


def walk_graph(repo_dir: Path, revs: list[str], *, since: str | None = None,
               until: str | None = None) -> Graph:
    """All commits reachable from `revs` (not only the main line: pull requests merged into
    maintenance branches live off it), without file lists: the diffs come later, batched."""
    argv = ["log", f"--format={_GRAPH_FORMAT}", "--no-color", "--topo-order"]
    argv += [f"--since={since}"] if since else []
    argv += [f"--until={until}"] if until else []
    out = git(repo_dir, *argv, *revs, "--")
    commits: list[Commit] = []
    nodes: dict[str, Node] = {}
    emails: dict[str, str] = {}
    for record in out.split(_RS):
        if not record:
            continue
        sha, parents, adate, cdate, at, ct, email, subject, body = record.split(_US, 8)
        parent_t = tuple(parents.split())
        commits.append(Commit(sha=sha, parents=parent_t, author_date=adate, commit_date=cdate,
                              subject=subject, body=body.strip()))
        nodes[sha] = Node(parent_t, int(at), int(ct))
        emails[sha] = email
    return Graph(commits, nodes, emails)


def walked_refs(repo_dir: Path) -> list[str]:
    """HEAD, every branch and every tag: release tags keep maintenance branches that were
    deleted after their last release reachable (sympy's 1.7 lives on only in its tags)."""
    out = git(repo_dir, "for-each-ref", "--format=%(objectname) %(objecttype) %(*objectname)",
              "refs/heads", "refs/tags", check=False)
    revs = ["HEAD"]
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] == "commit":
            revs.append(parts[0])
        elif len(parts) == 3 and parts[1] == "tag":
            revs.append(parts[2])  # an annotated tag: the commit it points to
    return list(dict.fromkeys(revs))


def pull_heads(repo_dir: Path) -> dict[int, str]:
    """refs/pull/N/head -> sha, the pull requests' own heads a GitHub mirror carries."""
    out = git(repo_dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/pull", check=False)
    heads: dict[int, str] = {}
    for line in out.splitlines():
        ref, _, sha = line.partition(" ")
        parts = ref.split("/")
        if len(parts) == 4 and parts[3] == "head" and parts[2].isdigit():
            heads[int(parts[2])] = sha
    return heads


def batch_diffs(repo_dir: Path, pairs: list[tuple[str, str]], *, names_only: bool = False) -> list[str]:
    """The diff of each (from, to) pair, from ONE `git diff-tree --stdin`.

    A line "to from" makes diff-tree diff `to` against `from`; with --always each pair prints
    its `to` sha even when the diff is empty, which is how the output is cut back into pairs.
    Renames are detected as the reference's diffs (GitHub's) show them.
    """
    if not pairs:
        return []
    stdin = "".join(f"{new} {old}\n" for old, new in pairs)
    form = ["--name-only"] if names_only else ["-p", "--binary", "--full-index"]
    out = git(repo_dir, "diff-tree", "--stdin", "-r", *form, "-M", "--always", "--no-color", "--no-ext-diff",
              input_text=stdin)
    diffs = _cut_at_lines(out, [new for _, new in pairs])
    if len(diffs) != len(pairs):
        raise IssuebenchError(f"git diff-tree answered {len(diffs)} of {len(pairs)} diffs in {repo_dir}",
                              hint="check that the repository is complete (not shallow)")
    if names_only:
        return diffs
    # U+FFFD marks bytes the text decoding replaced (or a UTF-8 file holding one): that pair
    # alone is read again as bytes, its non-UTF-8 files as binary patches.
    tree_args = ("diff-tree", "-r", *form, "-M", "--no-color", "--no-ext-diff")
    return [_exact_diff(repo_dir, tree_args, old, new) if "\ufffd" in diff else diff
            for (old, new), diff in zip(pairs, diffs, strict=True)]


# Where str.splitlines ends a line: a marker line is whole only after one of these.
_LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def _cut_at_lines(out: str, markers: list[str]) -> list[str]:
    """The text after each marker line up to the next one's, markers in order: what a walk
    over `out.splitlines(keepends=True)` gives when a line is a marker once its "\n" is
    stripped, found by `str.find` (the walk was most of the Python time of a big history).
    A 40-hex line never occurs inside a diff (binary hunk lines are 36 or 41 chars long)."""
    diffs: list[str] = []
    start: int | None = None  # where the current diff's text starts
    pos = 0
    for marker in markers:
        at = out.find(marker, pos)
        while at >= 0:
            end = at + len(marker)
            if (at == 0 or out[at - 1] in _LINE_ENDS) and (end == len(out) or out[end] == "\n"):
                break
            at = out.find(marker, at + 1)
        if at < 0:
            break  # the walk would have appended the rest to the current diff
        if start is not None:
            diffs.append(out[start:at])
        start = pos = min(len(out), at + len(marker) + 1)
    if start is not None:
        diffs.append(out[start:])
    return diffs


_DIFF_ARGS = ("diff", "--no-color", "--no-ext-diff", "--no-renames", "--binary")


def commit_diff(repo_dir: Path, base: str, head: str) -> str:
    """The full diff base..head, in the form `git apply` and the harness expect.

    A changed file whose text is not UTF-8 (a test fixture in Johab or Shift JIS) is given as a
    binary patch: read as text, its bytes became U+FFFD and the task's files were not the PR's.
    """
    return _exact_diff(repo_dir, _DIFF_ARGS, base, head)


def _exact_diff(repo_dir: Path, args: tuple[str, ...], base: str, head: str) -> str:
    """`git <args> base head` as text, any file whose text is not UTF-8 as a binary patch."""
    raw = subprocess.run(["git", "-c", "core.quotePath=false", *args, base, head],
                         cwd=repo_dir, capture_output=True, check=False).stdout
    undecodable = _undecodable_files(raw)
    if not undecodable:
        return git(repo_dir, *args, base, head)
    with tempfile.TemporaryDirectory(prefix="issuebench-attrs-") as tmp:
        attrs = Path(tmp) / "attributes"
        attrs.write_text("".join(f"/{_attr_pattern(p)} binary\n" for p in undecodable))
        return git(repo_dir, "-c", f"core.attributesFile={attrs}", *args, base, head)


def _undecodable_files(raw: bytes) -> list[str]:
    """Paths whose section of a diff is not UTF-8; a renamed or quoted path is skipped."""
    out = []
    for section in raw.split(b"\ndiff --git "):
        header, _, body = section.removeprefix(b"diff --git ").partition(b"\n")
        try:
            body.decode("utf-8")
            continue
        except UnicodeDecodeError:
            pass
        name = header.decode("utf-8", "replace")
        half = (len(name) - 5) // 2  # "a/P b/P": the same path twice
        path = name[2:2 + half]
        if name == f"a/{path} b/{path}" and "\ufffd" not in path:
            out.append(path)
    return out


def _attr_pattern(path: str) -> str:
    """A gitattributes pattern matching exactly path: glob characters escaped, blanks as `?`."""
    escaped = "".join(f"\\{c}" if c in "*?[\\!#" else c for c in path)
    return "".join("?" if c.isspace() else c for c in escaped)


def branch_commits_dates(repo_dir: Path, base: str, head: str) -> list[str]:
    """Author dates of the commits a merge brought in, oldest first."""
    out = git(repo_dir, "log", "--format=%aI", "--reverse", f"{base}..{head}", check=False)
    return [line for line in out.splitlines() if line]
