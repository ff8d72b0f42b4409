"""Batched git reads (issuebench.repos.objects) answer what one git process per read
answered, on real repositories built here; and assign_versions runs git a few times in all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from issuebench.collect.versions import assign_versions
from issuebench.models import Task
from issuebench.repos import objects as git_objects
from issuebench.repos.objects import VERSION_TAGS, ObjectReader, describe_version_tags
from issuebench.repos.version_rule import find_version, find_versions
from tests.gitrepo import commit_files, git, init_repo


def _show(repo: Path, commit: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True, text=True,
                          errors="replace", check=False).stdout


def _ls(repo: Path, treeish: str) -> list[str]:
    return subprocess.run(["git", "-c", "core.quotePath=false", "ls-tree", "--name-only", treeish], cwd=repo,
                          capture_output=True, text=True, errors="replace", check=False).stdout.split()


def _describe(repo: Path, rev: str) -> str:
    return subprocess.run(["git", "describe", "--tags", "--abbrev=0", "--match", VERSION_TAGS, rev], cwd=repo,
                          capture_output=True, text=True, check=False).stdout.strip()


def test_reader_answers_as_git_show_and_ls_tree(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    first = init_repo(repo, {"pkg/__init__.py": "__version__ = '1.0'\r\nx = 1\r\n",
                             "pkg/sub/release.py": "version = '1.0.dev'\n",
                             "with space/a.py": "a\n", 'odd"name\tx.py': "b\n", "caf\u00e9.txt": "\u00e9\n",
                             "setup.py": "from setuptools import setup\nsetup(version='1.0')\n"})
    (repo / "link").symlink_to("pkg/__init__.py")
    second = commit_files(repo, {"pkg/sub/release.py": "version = '1.1'\n", "pkg/new.py": "n\n"}, "two")
    paths = ["pkg/__init__.py", "pkg/sub/release.py", "setup.py", "link", "pkg", "pkg/sub", "nothing.py",
             "setup.py/x", "pkg/none/x.py", "with space/a.py", "caf\u00e9.txt"]
    with ObjectReader(repo) as reader:
        for commit in (first, second):
            for path in paths:
                # A folder shows as "" (git show lists it; no version file is a folder).
                expected = "" if path in ("pkg", "pkg/sub") else _show(repo, commit, path)
                assert reader.show(commit, path) == expected, (commit, path)
            for path in ("", "pkg", "pkg/sub", "setup.py", "missing", "with space"):
                treeish = f"{commit}:{path}" if path else commit
                assert reader.ls(commit, path) == _ls(repo, treeish), (commit, path)
        assert reader.show("0" * 40, "setup.py") == "" and reader.ls("0" * 40) == []
        assert reader.show(first, "pkg/__init__.py") == "__version__ = '1.0'\nx = 1\n"  # newlines as text=True
    assert '"odd\\"name\\tx.py"' in _ls(repo, first)  # ls-tree quotes it, and so does the reader


def test_reader_reads_a_file_shared_by_commits_once(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    commits = [init_repo(repo, {"pkg/release.py": "__version__ = '2.0'\n", "a.py": "0\n"})]
    commits += [commit_files(repo, {"a.py": f"{i}\n"}, f"c{i}") for i in range(1, 6)]
    with ObjectReader(repo) as reader:
        texts = {reader.show(c, "pkg/release.py") for c in commits}
        # Per commit: its tree and its changed pkg/ folder never (pkg/ is one id), the file once.
        assert texts == {"__version__ = '2.0'\n"}
        assert reader.requests == len(commits) + 1 + 1


def test_describe_many_equals_one_describe_per_commit(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    untagged = init_repo(repo, {"a.py": "0\n"})
    commits = [untagged]
    git(repo, "tag", "no-digits")
    commits.append(commit_files(repo, {"a.py": "1\n"}, "one"))
    git(repo, "tag", "v1.2.0")
    commits.append(commit_files(repo, {"a.py": "2\n"}, "two"))
    git(repo, "tag", "-a", "-m", "annotated", "v1.3.0")
    commits.append(commit_files(repo, {"a.py": "3\n"}, "three"))
    # Answers for revs git cannot describe (before any tag, the root's parent) sit between others.
    revs = [commits[3], untagged, commits[2], f"{untagged}^", commits[1], commits[3]]
    got = describe_version_tags(repo, revs)
    assert got == {rev: _describe(repo, rev) for rev in revs}
    assert got[commits[3]] == "v1.3.0" and got[untagged] == "" and got[f"{untagged}^"] == ""


def _count_git(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    started: list[list[str]] = []
    real = subprocess.Popen

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, args, *a, **k) -> None:
            started.append(list(args))
            super().__init__(args, *a, **k)

    monkeypatch.setattr(git_objects.subprocess, "Popen", Counting)
    return started


def test_versions_of_many_commits_take_a_few_git_processes(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "me__tool"  # no version file: every commit is read from its nearest tag
    commits = [init_repo(repo, {"tool/__init__.py": "from ._version import v\n"})]
    for i in range(1, 13):
        if i % 4 == 0:
            git(repo, "tag", f"v1.{i // 4}.0")
        commits.append(commit_files(repo, {"tool/a.py": f"{i}\n"}, f"c{i}"))
    git(repo, "tag", "untagged-123")  # skipped: the tag before it decides
    commits.append(commit_files(repo, {"tool/a.py": "13\n"}, "c13"))
    one_by_one = {c: find_version(repo, c) for c in commits}
    started = _count_git(monkeypatch)
    assert find_versions(repo, commits) == one_by_one
    assert one_by_one[commits[-1]].version == "1.3" and one_by_one[commits[0]] is None
    assert len(started) <= 3  # one cat-file, one describe per step; not one process per read
    started.clear()
    tasks = [Task(instance_id=f"me__tool-{i}", repo="me/tool", base_commit=c, created_at=f"2020-01-{i + 1:02d}")
             for i, c in enumerate(commits)]
    assign_versions(repo, tasks, main_line=commits[::-1])
    assert [t.version for t in tasks] == [(f.version if f else "0.0") for f in one_by_one.values()]
    assert len(started) <= 20  # a few per bisection step, whatever the number of tasks


def _walk(out: str, markers: list[str]) -> list[str]:
    """The line walk batch_diffs used before it searched (the reference for _cut_at_lines)."""
    diffs: list[str] = []
    current: list[str] | None = None
    expected = iter(markers)
    want = next(expected)
    for line in out.splitlines(keepends=True):
        if want is not None and line.rstrip("\n") == want:
            if current is not None:
                diffs.append("".join(current))
            current = []
            want = next(expected, None)
            continue
        if current is not None:
            current.append(line)
    if current is not None:
        diffs.append("".join(current))
    return diffs


def test_diff_output_is_cut_where_the_line_walk_cut_it() -> None:
    from issuebench.collect.history import _cut_at_lines

    a, b, c = "a" * 40, "b" * 40, "c" * 40
    cases = [
        f"{a}\ndiff one\n+{b}\n{b}x\n{b}\x0cmore\n {b}\n\x0c{b}\nsecond\n\n{c}",  # only whole lines count
        f"noise\n{a}\n{a}\n{b}\n",  # an empty diff, and a marker met again inside the next one
        f"{a}\r\ncrlf\n{b}\u2028{c}\nlast\n",  # every line end str.splitlines knows
        f"{a}\nnever the second\n",  # a marker missing: fewer diffs (the caller stops)
        f"{b}\n{a}\n",  # out of order: the first marker is not found at all
    ]
    for out in cases:
        assert _cut_at_lines(out, [a, b, c]) == _walk(out, [a, b, c]), repr(out)
    assert _cut_at_lines(cases[0], [a, b, c]) == [f"diff one\n+{b}\n{b}x\n{b}\x0cmore\n {b}\n\x0c", "second\n\n",
                                                  ""]
