"""Which tests lie beyond a task's graded lists, and which code lines a patch changed.

Three scopes, from cheap to thorough:

- "modules": the test modules of the changed code, found by name in the tree at the base commit
  (`pkg/foo.py` -> `test_foo.py` anywhere, `foo_test.py`, and the tests folder of `pkg/`);
- "covering": the tests whose coverage contexts touch a changed line (see covering.py), picked out
  of the whole suite's run under the gold patch;
- "suite": the test command with no file arguments, so the project's own configuration decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from issuebench.harness import git
from issuebench.patch import is_test_path, parse_patch

Scope = Literal["covering", "modules", "suite"]
SCOPES: tuple[str, ...] = ("covering", "modules", "suite")
# Beyond this many modules the pass would be a suite run in all but name; the nearest are kept.
MAX_MODULES = 25
_DATA_DIRS = {"example_scripts", "examples", "fixtures", "data", "testdata"}


@dataclass
class ChangedCode:
    """Code files a patch changes, with the new-side line numbers of its added or edited lines."""

    lines: dict[str, set[int]] = field(default_factory=dict)

    @property
    def files(self) -> list[str]:
        return sorted(self.lines)


def changed_code(patch: str | None) -> ChangedCode:
    """Non-test .py files of a patch and the lines it adds (a pure deletion marks the line after it)."""
    out = ChangedCode()
    try:
        files = parse_patch(patch or "")
    except ValueError:
        return out
    for fp in files:
        if fp.is_deleted or not fp.path.endswith(".py") or is_test_path(fp.path):
            continue
        lines = out.lines.setdefault(fp.path, set())
        for hunk in fp.hunks:
            new_line = hunk.new_start
            for body in hunk.lines:
                tag = body[:1]
                if tag == "+":
                    lines.add(new_line)
                    new_line += 1
                elif tag == "-":
                    lines.add(new_line)  # where the removed code was
                else:
                    new_line += 1
    return out


def list_test_files(source: Path, commit: str) -> list[str]:
    """Every Python test module in the tree at `commit` (conftest files are not modules to run)."""
    proc = git(source, "ls-tree", "-r", "--name-only", commit, check=False)
    if proc.returncode != 0:
        return []
    return [p for p in proc.stdout.splitlines()
            if p.endswith(".py") and is_test_path(p) and _is_test_module(PurePosixPath(p).name)]


def _is_test_module(name: str) -> bool:
    return name.startswith("test") or name.endswith("_test.py") or name.endswith("_tests.py") or name == "tests.py"


def module_tests(code_files: list[str], test_files: list[str], *, limit: int = MAX_MODULES) -> list[str]:
    """Test modules of the changed code files, nearest first.

    Per code file: the test modules named after it (`test_foo.py`, `foo_test.py`, `test_foo_*.py`),
    then the rest of the tests folder inside its package. Example projects that test suites keep
    as data (`example_scripts/`, `fixtures/`) are not modules to run."""
    ranked: dict[str, int] = {}
    runnable = [t for t in test_files if not _DATA_DIRS.intersection(PurePosixPath(t).parts[:-1])]
    for path in code_files:
        p = PurePosixPath(path)
        stem = (p.parent.name if p.stem == "__init__" else p.stem).lstrip("_")
        if not stem:
            continue
        named = {}
        for t in runnable:
            tstem = PurePosixPath(t).stem
            if tstem in (f"test_{stem}", f"{stem}_test", f"{stem}_tests", f"test{stem}"):
                named[t] = 0
            elif len(stem) > 3 and tstem.startswith(f"test_{stem}_"):
                named[t] = 1
        for t in runnable:  # the tests folder that sits inside the changed package
            tp = PurePosixPath(t)
            if tp.parent.parent == p.parent and tp.parent.name in ("tests", "test", "testing"):
                named.setdefault(t, 2)
        for t, rank in named.items():
            ranked[t] = min(rank, ranked.get(t, rank))
    return sorted(ranked, key=lambda t: (ranked[t], t))[:limit]


def graded_files(test_patch: str) -> list[str]:
    """The test files the task's own command already runs (the test patch's files)."""
    try:
        return [fp.path for fp in parse_patch(test_patch or "") if not fp.is_deleted]
    except ValueError:
        return []
