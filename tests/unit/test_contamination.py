"""Contamination probes: date split, near-duplicates, rewording, renaming (on a real tiny git repo)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from issuebench.analysis.contamination import (
    choose_symbol,
    date_split,
    jaccard,
    near_duplicates,
    rename_task_and_repository,
    reword_statement,
    shingles,
)
from issuebench.analysis.runs import InstanceResult, RunResults
from issuebench.models import Task

GOLD = """diff --git a/calc/ops.py b/calc/ops.py
--- a/calc/ops.py
+++ b/calc/ops.py
@@ -1,2 +1,2 @@
 def scale_value(x, k):
-    return x + k
+    return x * k
"""
TESTS = """diff --git a/tests/test_ops.py b/tests/test_ops.py
--- a/tests/test_ops.py
+++ b/tests/test_ops.py
@@ -1,3 +1,6 @@
 from calc.ops import scale_value
 def test_old():
     assert scale_value(0, 0) == 0
+
+def test_scale_value_multiplies():
+    assert scale_value(2, 3) == 6
"""


def make_task(iid: str = "calc__calc-1", created: str | None = "2024-01-01", statement: str | None = None) -> Task:
    return Task(instance_id=iid, repo="calc/calc", base_commit="0" * 40, patch=GOLD, test_patch=TESTS,
                created_at=created, FAIL_TO_PASS=["tests/test_ops.py::test_scale_value_multiplies"],
                PASS_TO_PASS=["tests/test_ops.py::test_old"],
                problem_statement=statement or "The function scale_value doesn't work: it adds instead of "
                                               "multiplying.\n```\n>>> scale_value(2, 3)\n5\n```\n")


def test_date_split_counts_and_one_sided_test():
    tasks = [make_task(f"t-{i}", created=f"2023-0{1 + i % 9}-01" if i < 10 else f"2024-0{1 + i % 9}-01")
             for i in range(20)]
    tasks.append(make_task("t-undated", created=None))
    inst = {t.instance_id: InstanceResult(t.instance_id, "x", resolved=(i < 9 or i in (10, 11)))
            for i, t in enumerate(tasks)}
    split = date_split(RunResults("s", Path("."), inst), tasks, "2024-01-01")
    assert (split.before.resolved, split.before.total) == (9, 10)
    assert (split.after.resolved, split.after.total) == (2, 10)
    assert split.undated == ["t-undated"]
    assert split.test.p_normal < 0.01 and split.test.p_exact < 0.01
    assert split.before.interval.low > split.after.interval.high


def test_near_duplicates_find_reworded_copies_and_exact_ones():
    base = "When I call the frobnicate method on an empty widget list the program crashes with an index error " * 2
    tasks = [make_task("a", statement=base), make_task("b", statement=base.upper()),
             make_task("c", statement=base + " Also on Tuesdays."),
             make_task("d", statement="A completely different complaint about date parsing in the calendar module.")]
    pairs = {(p.a, p.b): p for p in near_duplicates(tasks, threshold=0.7)}
    assert set(pairs) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert pairs[("a", "b")].identical and pairs[("a", "b")].jaccard == 1.0
    assert not pairs[("a", "c")].identical
    assert jaccard(shingles("a b c d e f"), shingles("a b c d e g")) == pytest.approx(1 / 3)


def test_reword_changes_prose_only():
    text = ("This bug doesn't show up often. However `get_value()` is wrong.\n"
            "```python\nx = get(bug)  # error: wrong\n```\n"
            ">>> show(error)\n"
            "ValueError: wrong value\n"
            "See https://example.org/bug/error for the issue.\n"
            "    indented error line stays\n")
    out = reword_statement(text)
    assert out.startswith("This defect does not display up often. But `get_value()` is incorrect.\n")
    for kept in ("```python\nx = get(bug)  # error: wrong\n```", ">>> show(error)", "ValueError: wrong value",
                 "https://example.org/bug/error", "    indented error line stays"):
        assert kept in out
    assert "for the problem." in out
    assert reword_statement(text) == out  # deterministic


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}).stdout


@pytest.fixture
def tiny_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "calc"
    (repo / "calc").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "calc" / "ops.py").write_text("def scale_value(x, k):\n    return x + k\n")
    (repo / "calc" / "__init__.py").write_text("from calc.ops import scale_value\n")
    (repo / "tests" / "test_ops.py").write_text(
        "from calc.ops import scale_value\ndef test_old():\n    assert scale_value(0, 0) == 0\n")
    (repo / "blob.bin").write_bytes(b"\0scale_value\0")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def test_rename_through_task_and_repository(tiny_repo):
    repo, base = tiny_repo
    task = make_task().model_copy(update={"base_commit": base})
    assert choose_symbol(task) == "scale_value"
    renamed = rename_task_and_repository(task, repo)
    assert renamed is not None and renamed.base_commit != base
    assert "scale_value_rn" in renamed.problem_statement and "scale_value(" not in renamed.patch
    # test ids keep their own names: 'test_scale_value_multiplies' is a different identifier
    assert renamed.FAIL_TO_PASS == task.FAIL_TO_PASS
    # The renamed repository holds the new name everywhere (text files), and the renamed gold
    # and test patches apply to it.
    assert "def scale_value_rn" in git(repo, "show", f"{renamed.base_commit}:calc/ops.py")
    assert "scale_value_rn" in git(repo, "show", f"{renamed.base_commit}:calc/__init__.py")
    assert git(repo, "show", f"{renamed.base_commit}:blob.bin") == "\0scale_value\0"
    work = repo.parent / "check"
    git(repo, "worktree", "add", "--detach", str(work), renamed.base_commit)
    (work / "gold.diff").write_text(renamed.patch)
    (work / "test.diff").write_text(renamed.test_patch)
    git(work, "apply", "--check", "gold.diff")
    git(work, "apply", "--check", "test.diff")
    # A ref keeps the commit; the clone's own checkout is untouched; the same inputs give the same sha.
    assert git(repo, "rev-parse", f"refs/issuebench/renamed/{task.instance_id}").strip() == renamed.base_commit
    assert git(repo, "rev-parse", "HEAD").strip() == base
    again = rename_task_and_repository(task, repo)
    assert again.base_commit == renamed.base_commit


def test_no_symbol_means_no_rename():
    task = make_task(statement="nothing named here at all").model_copy(update={"test_patch": ""})
    assert choose_symbol(task) is None
    assert rename_task_and_repository(task, None) is None
