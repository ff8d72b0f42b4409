"""Which files are tests, and splitting a diff into its code part and its test part."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from issuebench.patch.parse import FilePatch, parse_patch


@dataclass(frozen=True)
class TestPathRules:
    """How a path is judged to be a test file.

    A path is a test when any directory component equals one of `dirs` exactly (so `latest/` and
    `src/_pytest/` are not), or its file name matches one of `file_globs` (so `contest.py` is not).
    `include` and `exclude` are extra globs on the whole path; `exclude` wins over everything.
    """

    __test__ = False  # not a pytest test class despite the name

    # Beyond Python's: jest's `__tests__` (vuejs/core, immutable-js), its snapshots, Go's `testdata`.
    dirs: tuple[str, ...] = ("tests", "test", "testing", "__tests__", "__snapshots__", "testdata")
    # test.py: a suite kept in one top-level module (chardet), a test file to the reference too.
    # The other languages' conventions: a patch that edits one of their tests must be put back as a
    # Python test is (harness/guards.py), or it decides its own PASS_TO_PASS verdict.
    file_globs: tuple[str, ...] = ("test_*.py", "*_test.py", "*_tests.py", "test.py", "tests.py", "conftest.py",
                                   *(f"*.{kind}.{ext}" for kind in ("test", "spec")
                                     for ext in ("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts")),
                                   "*.snap", "*_test.go", "*_spec.rb", "spec_helper.rb", "rails_helper.rb",
                                   "*Test.java", "*Tests.java", "*Test.php",
                                   "*_test.c", "*_test.cc", "*_test.cpp", "*_unittest.cc")
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


DEFAULT_RULES = TestPathRules()


def is_test_path(path: str, rules: TestPathRules | None = None) -> bool:
    rules = rules or DEFAULT_RULES
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if any(fnmatchcase(path, glob) for glob in rules.exclude):
        return False
    if any(fnmatchcase(path, glob) for glob in rules.include):
        return True
    parts = [p for p in path.split("/") if p]
    if not parts:
        return False
    if any(part in rules.dirs for part in parts[:-1]):
        return True
    return any(fnmatchcase(parts[-1], glob) for glob in rules.file_globs)


def _file_is_test(fp: FilePatch, rules: TestPathRules | None) -> bool:
    return is_test_path(fp.path, rules)


def split_patch(text: str | None, rules: TestPathRules | None = None) -> tuple[str, str]:
    """(code patch, test patch): each file's section goes, verbatim, to one side."""
    code: list[str] = []
    tests: list[str] = []
    for fp in parse_patch(text):
        (tests if _file_is_test(fp, rules) else code).append(fp.text)
    return "".join(code), "".join(tests)


def files_touched(text: str | None) -> list[str]:
    """Every path the patch changes, in patch order, each once (both sides of a rename)."""
    seen: dict[str, None] = {}
    for fp in parse_patch(text):
        for path in (fp.path_old, fp.path_new):
            if path:
                seen.setdefault(path, None)
    return list(seen)
