"""split_diff cuts a diff at its header lines as the walk over every line did, whichever way
the text ends its lines; and the leak-free message skips no work it needed."""

from __future__ import annotations

import pytest

from issuebench.collect.candidates import _DIFF_HEADER, left_out_by_reference, split_diff
from issuebench.collect.candidates import test_predicate as make_test_predicate
from issuebench.collect.statements import leak_free_message


def _walk(diff_text: str, is_test, keep_left_out: bool) -> tuple[str, str]:
    """split_diff as it was: every line of str.splitlines, a header switching the side."""
    code: list[str] = []
    tests: list[str] = []
    dropped: list[str] = []
    target = code
    for line in diff_text.splitlines(keepends=True):
        header = _DIFF_HEADER.match(line.rstrip("\n"))
        if header:
            old, new = header.group(1), header.group(2)
            if is_test(new) or is_test(old):
                target = tests
            elif not keep_left_out and left_out_by_reference(new) and left_out_by_reference(old):
                target = dropped
            else:
                target = code
        target.append(line)
    return "".join(code), "".join(tests)


def _file(old: str, new: str, body: str) -> str:
    return f"diff --git a/{old} b/{new}\nindex 1..2 100644\n--- a/{old}\n+++ b/{new}\n@@ -1 +1 @@\n{body}"


DIFF = ("preamble line\n"
        + _file("pkg/a.py", "pkg/a.py", "-x = 1\n+x = 2\n+diff --git a/tests/t.py b/tests/t.py\n")
        + _file("tests/test_a.py", "tests/test_a.py", "+def test_a():\n+    pass\n")
        + "diff --git a/no-second-path\n"  # not a header: stays with the test file
        + _file("CHANGES.rst", "CHANGES.rst", "+- fixed x\n")
        + _file("docs/old.rst", "pkg/moved.py", "+moved\n")
        + _file("pkg/b.py", "pkg/b.py", "+y = 1"))  # no newline at the end


@pytest.mark.parametrize("keep_left_out", [True, False])
@pytest.mark.parametrize("text", [DIFF, DIFF.replace("+moved\n", "+form\x0cfeed\n"),
                                  DIFF.replace("+x = 2\n", "+x = 2\x0cdiff --git a/tests/u.py b/tests/u.py\n"),
                                  "", "no header at all\n"])
def test_split_diff_cuts_as_the_line_walk_did(text: str, keep_left_out: bool) -> None:
    is_test = make_test_predicate()
    assert split_diff(text, is_test, keep_left_out=keep_left_out) == _walk(text, is_test, keep_left_out)


def test_split_diff_sides() -> None:
    code, tests = split_diff(DIFF, make_test_predicate(), keep_left_out=False)
    assert code.startswith("preamble line\ndiff --git a/pkg/a.py") and "+diff --git a/tests/t.py" in code
    assert "CHANGES.rst" not in code and "pkg/moved.py" in code and code.endswith("+y = 1")
    assert tests.startswith("diff --git a/tests/test_a.py") and tests.endswith("diff --git a/no-second-path\n")


def test_message_lines_of_the_fix_and_test_names_still_go() -> None:
    patch = _file("pkg/a.py", "pkg/a.py", "+    return compute_two(cache=True)\n")
    test_patch = _file("tests/test_a.py", "tests/test_a.py", "+def test_two():\n")
    message = "Fix two\n\n    return compute_two(cache=True)\nsee test_two; tested by hand\nabc"
    assert leak_free_message(message, patch=patch, test_patch=test_patch) == (
        "Fix two\n\nsee <redacted>; tested by hand\nabc")
    # Nothing of the message in the patch, no "test" in it: kept as it is.
    assert leak_free_message("Fix two\n\nplain words", patch=patch, test_patch=test_patch) == (
        "Fix two\n\nplain words")


def test_a_suite_in_one_top_level_test_module_goes_to_the_test_patch() -> None:
    # chardet keeps its suite in test.py (its EXPECTED_FAILURES with it): as code, a pull request's
    # change to the expected failures became part of the gold patch, and the gold "broke" tests.
    diff = ("diff --git a/chardet/probe.py b/chardet/probe.py\n--- a/chardet/probe.py\n+++ b/chardet/probe.py\n"
            "@@ -1 +1 @@\n-a\n+b\n"
            "diff --git a/test.py b/test.py\n--- a/test.py\n+++ b/test.py\n@@ -1 +1 @@\n-c\n+d\n")
    code, tests = split_diff(diff, make_test_predicate())
    assert code.startswith("diff --git a/chardet/probe.py") and "test.py" not in code
    assert tests.startswith("diff --git a/test.py")
    assert not make_test_predicate()("pkg/contest.py")
