"""collect tells a test patch that changes only comments from one that changes tests."""

from __future__ import annotations

from issuebench.collect.test_change import changes_test_code


def _patch(path: str, removed: list[str], added: list[str]) -> str:
    body = "".join(f"-{line}\n" for line in removed) + "".join(f"+{line}\n" for line in added)
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1,{len(removed) + 1} +1,{len(added) + 1} @@\n def f():\n{body}")


def test_a_dropped_type_ignore_comment_is_no_test_change() -> None:
    # returns' mypy upgrade: `# type: ignore[attr-defined]` dropped from a test's __eq__.
    patch = _patch("tests/test_pickle.py", ["    and self.inner == other.inner  # type: ignore[attr-defined]"],
                   ["    and self.inner == other.inner", ""])
    assert not changes_test_code(patch)


def test_a_changed_assertion_or_a_string_holding_a_hash_is_a_test_change() -> None:
    assert changes_test_code(_patch("tests/test_x.py", ["    assert f() == 1"], ["    assert f() == 2"]))
    assert changes_test_code(_patch("tests/test_x.py", ['    x = "a#b"'], ['    x = "a#c"']))
    # A line inside a multi-line string does not tokenize alone: it counts as changed as it is.
    assert changes_test_code(_patch("tests/test_x.py", ['    """old # text'], ['    """new # text']))


def test_a_file_other_than_python_counts_as_a_change() -> None:
    assert changes_test_code(_patch("typesafety/test_maybe.yml", ["# comment"], ["# other comment"]))
    both = _patch("tests/test_x.py", ["    x = 1  # one"], ["    x = 1  # uno"]) + \
        _patch("tests/data/case.txt", ["a"], ["b"])
    assert changes_test_code(both)


def test_an_assert_moved_out_of_a_block_or_two_lines_swapped_is_a_test_change() -> None:
    moved = ("diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n"
             "@@ -1,3 +1,3 @@\n def test():\n     with pytest.raises(E):\n-        f()\n+    f()\n")
    assert changes_test_code(moved)
    swapped = _patch("tests/test_x.py", ["    a()", "    b()"], ["    b()", "    a()"])
    assert changes_test_code(swapped)
