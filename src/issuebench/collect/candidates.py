"""Which commits are candidate tasks, and how a candidate's diff splits into gold and test patch.

A candidate is a merged pull request (a merge commit "Merge pull request #N ..." diffed against its
first parent, or a squash commit whose subject ends with "(#N)"), or, when asked, any plain commit.
It is kept only when it changes both test files and non-test files: without a test change there is
nothing to validate, without a code change there is nothing to solve.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from issuebench.collect.history import Commit
from issuebench.collect.pulls import MERGE_PR, squash_number
from issuebench.patch import TestPathRules, is_test_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


CandidateKind = Literal["merge", "squash", "commit"]
PathPredicate = Callable[[str], bool]


@dataclass(frozen=True)
class Candidate:
    commit: Commit
    kind: CandidateKind
    pr_number: int | None

    @property
    def base_commit(self) -> str:
        return self.commit.parents[0]

    @property
    def label(self) -> str:
        """The part of the instance id after the repository: the PR number or a short sha."""
        return str(self.pr_number) if self.pr_number is not None else self.commit.sha[:10]


def detect_candidate(commit: Commit, *, include_commits: bool = False) -> Candidate | None:
    """Classify one commit of the main line; None when it cannot be a task."""
    if not commit.parents:
        return None  # the root commit has no base to diff against
    if commit.is_merge:
        match = MERGE_PR.match(commit.subject)
        return Candidate(commit, "merge", int(match.group(1))) if match else None
    number = squash_number(commit.subject)
    if number is not None:
        return Candidate(commit, "squash", number)
    return Candidate(commit, "commit", None) if include_commits else None


def test_predicate(globs: Sequence[str] = ()) -> PathPredicate:
    """The project's test-path rules, or per-repository globs (--test-paths) that replace them.

    A glob matches the whole path or any tail of it ("test_*.py" matches "pkg/test_a.py");
    a glob starting with "!" excludes (it wins over everything).
    """

    # Kept per path: a history's candidates ask about the same files again and again.
    if not globs:
        return functools.lru_cache(maxsize=1 << 16)(is_test_path)
    include = tuple(g for g in globs if not g.startswith("!"))
    exclude = tuple(g[1:] for g in globs if g.startswith("!"))
    rules = TestPathRules(dirs=(), file_globs=(), include=_with_tails(include),
                          exclude=_with_tails(exclude))
    return functools.lru_cache(maxsize=1 << 16)(lambda path: is_test_path(path, rules))


def _with_tails(globs: Sequence[str]) -> tuple[str, ...]:
    out: list[str] = []
    for glob in globs:
        glob = glob.rstrip("/") + "/*" if glob.endswith("/") else glob
        out += [glob] if glob.startswith(("*", "/")) else [glob, f"*/{glob}"]
    return tuple(out)


def changes_tests_and_code(files: Sequence[str], is_test: PathPredicate) -> tuple[bool, bool]:
    has_test = has_code = False
    for path in files:
        if is_test(path):
            has_test = True
        else:
            has_code = True
        if has_test and has_code:
            break
    return has_test, has_code


_DIFF_HEADER = re.compile(r"^diff --git a/(.*?) b/(.*)$")
_HEADER_START = re.compile(r"^diff --git a/", re.MULTILINE)
# Line ends str.splitlines knows besides "\n" (git()'s text mode already made "\r\n" "\n").
_OTHER_LINE_ENDS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _data(name: str) -> dict:
    return tomllib.loads(resources.files("issuebench.collect").joinpath(f"data/{name}").read_text())


@functools.cache
def _left_out_rules() -> tuple[tuple[str, ...], frozenset[str], frozenset[str]]:
    data = _data("left_out_paths.toml")
    return (tuple(n.lower() for n in data["names"]), frozenset(data["dirs"]), frozenset(data["doc_dirs"]))


@functools.lru_cache(maxsize=1 << 16)  # a history touches the same paths again and again
def left_out_by_reference(path: str) -> bool:
    """A changelog, news fragment, authors list or documentation page: the reference's gold
    patches carry none of them (they cannot make a test pass, and would not apply cleanly to
    another base)."""
    names, dirs, doc_dirs = _left_out_rules()
    parts = path.split("/")
    if any(fnmatch.fnmatchcase(parts[-1].lower(), glob) for glob in names):
        return not parts[-1].endswith(".py")
    if any(part.lower() in dirs for part in parts[:-1]):
        return True
    return any(part.lower() in doc_dirs for part in parts[:-1]) and not parts[-1].endswith(".py")


@functools.cache
def _housekeeping_globs() -> tuple[str, ...]:
    return tuple(_data("housekeeping_paths.toml")["globs"])


@functools.lru_cache(maxsize=1 << 16)
def housekeeping(path: str) -> bool:
    """A continuous-integration, editor, linter or packaging-manifest file: no test's outcome
    depends on it (data/housekeeping_paths.toml)."""
    return any(fnmatch.fnmatchcase(path, glob) for glob in _housekeeping_globs())


def counts_as_code(path: str, keep_left_out: bool = False) -> bool:
    """A non-test file whose change makes a pull request a candidate: neither housekeeping nor (unless
    kept) a file the reference's gold patches leave out."""
    return not housekeeping(path) and (keep_left_out or not left_out_by_reference(path))


def split_diff(diff_text: str, is_test: PathPredicate, *,
               keep_left_out: bool = True) -> tuple[str, str]:
    """Split a git diff into (code patch, test patch) file by file, in the original order;
    without keep_left_out, non-test files the reference leaves out go nowhere."""
    out: dict[str, list[str]] = {"code": [], "tests": [], "dropped": []}
    target = "code"
    if _OTHER_LINE_ENDS.search(diff_text):  # lines as str.splitlines cuts them: walk them
        for line in diff_text.splitlines(keepends=True):
            header = _DIFF_HEADER.match(line.rstrip("\n")) if line.startswith("diff --git a/") else None
            if header:
                target = _side(header, is_test, keep_left_out)
            out[target].append(line)
    else:  # only "\n" ends lines: cut at the header lines alone (a walk over every line was slow)
        start = 0
        for found in _HEADER_START.finditer(diff_text):
            end = diff_text.find("\n", found.start())
            header = _DIFF_HEADER.match(diff_text[found.start():end if end >= 0 else len(diff_text)])
            if header:
                out[target].append(diff_text[start:found.start()])
                start, target = found.start(), _side(header, is_test, keep_left_out)
        out[target].append(diff_text[start:])
    return "".join(out["code"]), "".join(out["tests"])


def _side(header: re.Match[str], is_test: PathPredicate, keep_left_out: bool) -> str:
    old, new = header.group(1), header.group(2)
    if is_test(new) or is_test(old):
        return "tests"
    if not keep_left_out and left_out_by_reference(new) and left_out_by_reference(old):
        return "dropped"
    return "code"


def test_files_of(test_patch: str) -> list[str]:
    """Paths a test patch touches (what the harness runs)."""
    files = []
    for line in test_patch.splitlines():
        header = _DIFF_HEADER.match(line)
        if header and header.group(2) not in files:
            files.append(header.group(2))
    return files
