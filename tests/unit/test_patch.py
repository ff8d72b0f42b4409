"""The patch engine on real git repositories built in tmp_path."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from issuebench.models import PatchStatus
from issuebench.patch import (
    TestPathRules,
    apply_patch,
    check_patch,
    diagnose_patch,
    files_touched,
    is_test_path,
    needs_repair,
    parse_patch,
    patch_stats,
    repair_patch,
    split_patch,
)

ORIGINAL = "".join(f"line {i}\n" for i in range(1, 21))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text(ORIGINAL)
    (root / "README").write_text("hello\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def diff_of(repo: Path, path: str, new_text: str, *, extra: tuple[str, ...] = ()) -> str:
    """A real `git diff` for changing `path` to `new_text`, with the tree put back afterwards."""
    target = repo / path
    old = target.read_text() if target.exists() else None
    target.write_text(new_text)
    git(repo, "add", "-N", path)
    text = git(repo, "diff", *extra, "--", path)
    if old is None:
        git(repo, "rm", "-q", "--cached", path)
        target.unlink()
    else:
        target.write_text(old)
    return text


def is_clean(repo: Path) -> bool:
    return git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def leftovers(repo: Path) -> list[str]:
    return [str(p) for p in repo.rglob("*") if p.suffix in (".rej", ".orig")]


CHANGED = ORIGINAL.replace("line 10\n", "line ten\n")


# --- check / parse ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [None, "", "  \n\n"])
def test_empty_patch_is_empty(text: str | None) -> None:
    assert check_patch(text) is PatchStatus.EMPTY


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("I fixed the bug by editing utils.py.\n", "no 'diff --git'"),
        ("--- a/x.py\n+++ b/x.py\n@@ @@\n-a\n+b\n", "without line numbers"),
        ("--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "leaves the repository"),
        ("--- a/.git/hooks/post-checkout\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+rm -rf /\n",
         "inside .git"),
        ("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "absolute"),
    ],
)
def test_invalid_patch_names_the_reason(text: str, why: str) -> None:
    status, reason = diagnose_patch(text)
    assert status is PatchStatus.INVALID
    assert why in reason


def test_parse_git_diff_fields(repo: Path) -> None:
    text = diff_of(repo, "pkg/mod.py", CHANGED) + diff_of(repo, "pkg/new.py", "x = 1\n")
    files = parse_patch(text)
    assert [f.path for f in files] == ["pkg/mod.py", "pkg/new.py"]
    mod, new = files
    assert (mod.path_old, mod.path_new, mod.is_new, mod.is_deleted) == ("pkg/mod.py", "pkg/mod.py", False, False)
    assert (mod.added, mod.removed, len(mod.hunks)) == (1, 1, 1)
    assert mod.hunks[0].counts_ok
    assert new.is_new and new.path_old is None and new.added == 1
    assert check_patch(text) is None


def test_parse_deleted_binary_and_renamed() -> None:
    text = (
        "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex 1234567..0000000\n"
        "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
        "diff --git a/img.png b/img.png\nindex 1111111..2222222 100644\nBinary files a/img.png and b/img.png differ\n"
        "diff --git a/src/x.py b/src/y.py\nsimilarity index 100%\nrename from src/x.py\nrename to src/y.py\n"
    )
    deleted, binary, renamed = parse_patch(text)
    assert deleted.is_deleted and deleted.path == "old.txt" and deleted.removed == 2
    assert binary.is_binary and not binary.hunks
    assert renamed.is_rename and (renamed.path_old, renamed.path_new) == ("src/x.py", "src/y.py")
    assert patch_stats(text).deleted == 1
    assert files_touched(text) == ["old.txt", "img.png", "src/x.py", "src/y.py"]


def test_removed_line_that_looks_like_a_header_stays_in_its_hunk() -> None:
    text = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n keep\n"
    (fp,) = parse_patch(text)
    assert fp.hunks[0].lines == ["--- x", "+++ y", " keep"]
    assert fp.hunks[0].counts_ok


# --- apply: each method and status ---------------------------------------------------------

def test_exact_patch_applies_with_git_apply(repo: Path) -> None:
    result = apply_patch(repo, diff_of(repo, "pkg/mod.py", CHANGED))
    assert (result.status, result.method) == (PatchStatus.APPLIED, "git apply")
    assert (repo / "pkg/mod.py").read_text() == CHANGED


def test_three_way_merge_when_context_moved_but_blobs_known(repo: Path) -> None:
    text = diff_of(repo, "pkg/mod.py", CHANGED)  # made against the base commit
    # Upstream edits a context line next to the change after the patch was made.
    (repo / "pkg/mod.py").write_text(ORIGINAL.replace("line 7\n", "line seven\n"))
    git(repo, "commit", "-qam", "upstream edit")
    result = apply_patch(repo, text)
    assert (result.status, result.method) == (PatchStatus.APPLIED, "git apply --3way")
    body = (repo / "pkg/mod.py").read_text()
    assert "line seven\nline 8\nline 9\nline ten\n" in body
    assert git(repo, "diff", "--cached") == "", "3-way leaves nothing staged"


def test_fuzzy_patch_applies_with_gnu_patch_and_counts_as_repaired(repo: Path) -> None:
    # No 'index' line (so no 3-way), and a context line that differs from the tree.
    text = (
        "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line NINE\n"
        "-line 10\n+line ten\n line 11\n line 12\n line 13\n"
    )
    result = apply_patch(repo, text)
    assert (result.status, result.method) == (PatchStatus.APPLIED_AFTER_REPAIR, "patch --fuzz=5")
    assert "line ten\n" in (repo / "pkg/mod.py").read_text()
    assert leftovers(repo) == []


def test_broken_hunk_counts_are_repaired(repo: Path) -> None:
    good = diff_of(repo, "pkg/mod.py", CHANGED.replace("line 12\n", "line 12\nextra\n"))
    broken = good.replace("@@ -7,9 +7,10 @@", "@@ -7,3 +7,3 @@")
    assert broken != good and needs_repair(broken)
    result = apply_patch(repo, broken)
    assert (result.status, result.method) == (PatchStatus.APPLIED_AFTER_REPAIR, "repair + git apply")
    assert (repo / "pkg/mod.py").read_text() == CHANGED.replace("line 12\n", "line 12\nextra\n")
    assert repair_patch(broken).split("\n")[4].startswith("@@ -7,9 +7,10 @@")


def test_blank_context_lines_without_their_space_are_repaired(repo: Path) -> None:
    (repo / "pkg/blank.py").write_text("a\n\nb\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "blank")
    text = "--- a/pkg/blank.py\n+++ b/pkg/blank.py\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n"
    result = apply_patch(repo, text)
    assert result.applied
    assert (repo / "pkg/blank.py").read_text() == "a\n\nB\n"


def test_patch_that_does_not_apply_leaves_tree_untouched(repo: Path) -> None:
    good = diff_of(repo, "README", "bye\n")
    bad = diff_of(repo, "pkg/mod.py", CHANGED).replace("-line 10", "-line 99").replace(" line 9\n", " nope\n")
    bad = bad.replace(" line 8\n", " nah\n").replace(" line 11\n", " no\n")
    # Strip blob ids so 3-way cannot rescue it.
    bad = "\n".join(line for line in bad.split("\n") if not line.startswith("index "))
    result = apply_patch(repo, good + bad)
    assert result.status is PatchStatus.DOES_NOT_APPLY
    assert result.method is None
    assert result.reason.startswith("patch does not apply")
    assert is_clean(repo), "no file of a failed patch may be left changed"
    assert leftovers(repo) == []


@pytest.mark.parametrize("variant", ["crlf", "no_final_newline", "no_prefix"])
def test_tolerates_sloppy_formatting(repo: Path, variant: str) -> None:
    text = diff_of(repo, "pkg/mod.py", CHANGED)
    if variant == "crlf":
        text = text.replace("\n", "\r\n")
    elif variant == "no_final_newline":
        text = text.rstrip("\n")
    else:
        text = diff_of(repo, "pkg/mod.py", CHANGED, extra=("--no-prefix",))
        assert "--- pkg/mod.py" in text
    result = apply_patch(repo, text)
    assert result.status is PatchStatus.APPLIED
    assert (repo / "pkg/mod.py").read_text() == CHANGED


def test_empty_and_invalid_never_touch_the_tree(repo: Path) -> None:
    assert apply_patch(repo, "").status is PatchStatus.EMPTY
    result = apply_patch(repo, "just prose\n")
    assert result.status is PatchStatus.INVALID and "no 'diff --git'" in result.log
    escaping = "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n"
    assert apply_patch(repo, escaping).status is PatchStatus.INVALID
    assert not (repo.parent / "outside.txt").exists()
    assert is_clean(repo)


def test_new_and_deleted_files_apply(repo: Path) -> None:
    text = diff_of(repo, "pkg/new.py", "x = 1\n")
    (repo / "README").unlink()
    text += git(repo, "diff", "--", "README")
    git(repo, "checkout", "--", "README")
    result = apply_patch(repo, text)
    assert result.status is PatchStatus.APPLIED
    assert (repo / "pkg/new.py").read_text() == "x = 1\n"
    assert not (repo / "README").exists()


# --- test paths, split, stats ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_api.py", True),
        ("sympy/core/tests/test_basic.py", True),
        ("testing/python/approx.py", True),
        ("test/helpers.js", True),
        ("pkg/test_util.py", True),
        ("pkg/util_test.py", True),
        ("pkg/util_tests.py", True),
        ("conftest.py", True),
        ("doc/en/conftest.py", True),
        ("src/_pytest/python.py", False),
        ("src/_pytest/pytester.py", False),
        ("latest/notes.py", False),
        ("pkg/contest.py", False),
        ("pkg/testable.py", False),
        ("requests/models.py", False),
        # other languages' tests, as the Multimodal and Multilingual rows' test patches lay them out
        ("packages/runtime-core/__tests__/apiWatch.spec.ts", True),
        ("__tests__/Range.ts", True),
        ("packages/docusaurus-utils/src/__tests__/__snapshots__/markdownLinks.test.ts.snap", True),
        ("src/core/scale.test.js", True),
        ("tree_test.go", True),
        ("promql/testdata/functions.test", True),
        ("fastlane/spec/lane_manager_base_spec.rb", True),
        ("src/test/java/com/google/gson/GsonTest.java", True),
        ("packages/runtime-core/src/apiWatch.ts", False),
        ("src/helpers/helpers.core.js", False),
        ("openapi_core/spec/paths.py", False),
        ("src/jv_print.c", False),
    ],
)
def test_is_test_path_on_real_layouts(path: str, expected: bool) -> None:
    assert is_test_path(path) is expected


def test_test_path_rules_are_configurable() -> None:
    rules = TestPathRules(include=("spec/*",), exclude=("tests/fixtures/*",))
    assert is_test_path("spec/models.rb", rules)
    assert not is_test_path("tests/fixtures/data.py", rules)
    assert is_test_path("tests/test_x.py", rules)


def test_split_patch_keeps_sections_verbatim(repo: Path) -> None:
    code = diff_of(repo, "pkg/mod.py", CHANGED)
    (repo / "tests").mkdir()
    test = diff_of(repo, "tests/test_mod.py", "def test_x():\n    assert True\n")
    code_part, test_part = split_patch(test + code)
    assert code_part == code
    assert test_part == test
    assert split_patch(code) == (code, "")


def test_patch_stats_counts(repo: Path) -> None:
    text = diff_of(repo, "pkg/mod.py", CHANGED.replace("line 3\n", "")) + diff_of(repo, "pkg/n.py", "a\nb\n")
    stats = patch_stats(text)
    assert (stats.files, stats.added, stats.removed, stats.created, stats.deleted) == (2, 3, 2, 1, 0)
    assert stats.hunks == 2  # the two nearby edits share one hunk
