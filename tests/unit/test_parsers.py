"""Parsers: each reads the real log shapes its runner prints, with the reference's ids."""

from __future__ import annotations

import pytest

from issuebench.errors import IssuebenchError
from issuebench.models import TestStatus
from issuebench.parsers import (
    extract_test_output,
    get_parser,
    known_parsers,
    parser_for_repo,
)

P, F, E, S, X = (TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR, TestStatus.SKIPPED,
                 TestStatus.XFAIL)

PYTEST_LOG = """\
============================= test session starts ==============================
collected 6 items

tests/test_a.py ..F.sx                                                   [100%]
=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
PASSED tests/test_a.py::test_param[1-2]
FAILED tests/test_a.py::test_bad - AssertionError: assert 1 == 2
ERROR tests/test_a.py::test_fixture - RuntimeError
SKIPPED [1] tests/test_a.py:40: needs network
XFAIL tests/test_a.py::test_known - reason: bug 12
ERROR: pip's dependency resolver says hello
PASSED
"""


def test_pytest_reads_summary_lines_and_ignores_noise() -> None:
    result = get_parser("pytest")(PYTEST_LOG)
    assert result == {
        "tests/test_a.py::test_one": P,
        "tests/test_a.py::test_param[1-2]": P,
        "tests/test_a.py::test_bad": F,
        "tests/test_a.py::test_fixture": E,
        "tests/test_a.py::test_known": X,
    }


def test_reference_names_and_short_aliases_give_the_same_parser() -> None:
    assert get_parser("parse_log_pytest") is get_parser("pytest")
    assert get_parser("parse_log_xarray") is get_parser("pytest")
    assert get_parser("parse_log_requests") is get_parser("pytest_options")
    assert get_parser("sphinx") is get_parser("parse_log_pytest_v2")
    assert get_parser(" Django ") is get_parser("parse_log_django")
    assert "unittest" in known_parsers() and "parse_log_junit" in known_parsers()


def test_unknown_parser_error_lists_known_names() -> None:
    with pytest.raises(IssuebenchError) as info:
        get_parser("nose")
    assert "nose" in str(info.value)
    assert "django" in str(info.value) and "unittest" in str(info.value)


@pytest.mark.parametrize(("repo", "name"), [
    ("django/django", "parse_log_django"),
    ("sympy/sympy", "parse_log_sympy"),
    ("psf/requests", "parse_log_requests"),
    ("scikit-learn/scikit-learn", "parse_log_scikit"),
    ("sphinx-doc/sphinx", "parse_log_sphinx"),
    ("matplotlib/matplotlib", "parse_log_matplotlib"),
    ("someone/elsewhere", "parse_log_pytest"),
])
def test_parser_for_repo_follows_the_reference(repo: str, name: str) -> None:
    assert parser_for_repo(repo) == name
    get_parser(name)  # every name it returns is registered


def test_pytest_options_shortens_absolute_path_parameters_only() -> None:
    log = ("PASSED tests/test_x.py::test_path[/tmp/pytest-1/abc/data.txt]\n"
           "PASSED tests/test_x.py::test_url[//host/share]\n"
           "PASSED tests/test_x.py::test_glob[/tmp/*.txt]\n"
           "FAILED tests/test_x.py::test_rel[a/b] - boom\n")
    assert get_parser("pytest_options")(log) == {
        "tests/test_x.py::test_path[/data.txt]": P,
        "tests/test_x.py::test_url[//host/share]": P,
        "tests/test_x.py::test_glob[/tmp/*.txt]": P,
        "tests/test_x.py::test_rel[a/b]": F,
    }


def test_pytest_v2_strips_colours_keeps_spaces_and_reads_old_progress_lines() -> None:
    log = ("\x1b[32mPASSED\x1b[0m tests/test_b.py::test_space[a b]\n"
           "\x1b[31mFAILED\x1b[0m tests/test_b.py::test_fail - assert x - y\n"
           "tests/test_b.py::test_old PASSED\n")
    assert get_parser("pytest_v2")(log) == {
        "tests/test_b.py::test_space[a b]": P,
        "tests/test_b.py::test_fail": F,
        "tests/test_b.py::test_old": P,
    }
    # The older reference form keeps only the first token of an id.
    assert "tests/test_b.py::test_space[a" in get_parser("pytest_v2_legacy")(log)


def test_matplotlib_renames_mouse_buttons() -> None:
    log = "PASSED lib/test_w.py::test_click[MouseButton.LEFT]\nPASSED lib/test_w.py::test_click[MouseButton.RIGHT]\n"
    assert get_parser("matplotlib")(log) == {"lib/test_w.py::test_click[1]": P,
                                             "lib/test_w.py::test_click[3]": P}


def test_seaborn_reads_both_line_orders() -> None:
    log = ("tests/test_c.py::test_a PASSED [ 50%]\nPASSED tests/test_c.py::test_b\n"
           "FAILED tests/test_c.py::test_c - oops\n")
    assert get_parser("seaborn")(log) == {"tests/test_c.py::test_a": P, "tests/test_c.py::test_b": P,
                                          "tests/test_c.py::test_c": F}


DJANGO_LOG = """\
Testing against Django installed in '/repo/django'
test_plain (app.tests.PlainTests) ... ok
test_fails (app.tests.PlainTests) ... FAIL
test_errors (app.tests.PlainTests) ... ERROR
test_skip (app.tests.PlainTests) ... skipped 'no db'
test_docstring (app.tests.DocTests)
A docstring becomes the id. ... ok
test_noisy (app.tests.NoisyTests) ... some output
more output
ok
test_sub (app.tests.SubTests) ... test_after (app.tests.SubTests) ... ok
test_interrupted (app.tests.LogTests) ... System check identified no issues (0 silenced).
ok
--version is equivalent to version

======================================================================
FAIL: test_sub (app.tests.SubTests) (value=3)
----------------------------------------------------------------------
"""


def test_django_matches_the_reference_ids_and_special_cases() -> None:
    result = get_parser("django")(DJANGO_LOG)
    assert result["test_plain (app.tests.PlainTests)"] is P
    assert result["test_fails (app.tests.PlainTests)"] is F
    assert result["test_errors (app.tests.PlainTests)"] is E
    assert result["test_skip (app.tests.PlainTests)"] is S
    assert result["A docstring becomes the id."] is P
    assert result["test_noisy (app.tests.NoisyTests)"] is P
    assert result["test_interrupted (app.tests.LogTests)"] is P
    assert result["--version is equivalent to version"] is P
    # The subtest-failure header marks the test; the chained line gives the reference's odd id.
    assert result["test_sub"] is F
    assert result["test_sub (app.tests.SubTests) ... test_after (app.tests.SubTests)"] is P


SYMPY_LOG = """\
sympy/core/tests/test_basic.py[3]
test_ok ok
test_fail F
test_error E
________________________________ sympy/core/tests/test_basic.py:test_fail _________________________________
"""


def test_sympy_reads_verdicts_and_failure_headers() -> None:
    assert get_parser("sympy")(SYMPY_LOG) == {
        "test_ok": P, "test_fail": F, "test_error": E,
        "sympy/core/tests/test_basic.py:test_fail": F,
    }


UNITTEST_OLD = """\
test_doc (pkg.test_m.T)
First docstring line. ... ok
test_err (pkg.test_m.T) ... ERROR
test_fail (pkg.test_m.T) ... FAIL
test_print (pkg.test_m.T) ... hellook
test_printed_lines (pkg.test_m.T) ... look
more
FAIL
test_skip (pkg.test_m.T) ... skipped 'because'
test_sub (pkg.test_m.T) ... test_subok (pkg.test_m.T) ... ok
test_us (pkg.test_m.T) ... unexpected success
test_xf (pkg.test_m.T) ... expected failure

======================================================================
FAIL: test_sub (pkg.test_m.T) (i=1)
----------------------------------------------------------------------
"""

UNITTEST_311 = """\
test_doc (pkg.test_m.T.test_doc)
First docstring line. ... ok
test_err (pkg.test_m.T.test_err) ... ERROR
test_fail (pkg.test_m.T.test_fail) ... FAIL
test_print (pkg.test_m.T.test_print) ... hellook
test_printed_lines (pkg.test_m.T.test_printed_lines) ... look
more
FAIL
test_skip (pkg.test_m.T.test_skip) ... skipped 'because'
test_sub (pkg.test_m.T.test_sub) ...
  test_sub (pkg.test_m.T.test_sub) (i=1) ... FAIL
test_subok (pkg.test_m.T.test_subok) ... ok
test_us (pkg.test_m.T.test_us) ... unexpected success
test_xf (pkg.test_m.T.test_xf) ... expected failure
"""

UNITTEST_EXPECTED = {
    "pkg.test_m.T.test_doc": P, "pkg.test_m.T.test_err": E, "pkg.test_m.T.test_fail": F,
    "pkg.test_m.T.test_print": P, "pkg.test_m.T.test_printed_lines": F,
    "pkg.test_m.T.test_skip": S, "pkg.test_m.T.test_sub": F, "pkg.test_m.T.test_subok": P,
    "pkg.test_m.T.test_us": F, "pkg.test_m.T.test_xf": X,
}


@pytest.mark.parametrize("log", [UNITTEST_OLD, UNITTEST_311], ids=["pre-3.11", "3.11+"])
def test_unittest_gives_the_same_ids_on_every_python(log: str) -> None:
    assert get_parser("unittest")(log) == UNITTEST_EXPECTED


def test_unittest_failure_section_overrides_an_earlier_verdict() -> None:
    log = "test_a (m.C) ... ok\n\n" + "=" * 70 + "\nERROR: test_a (m.C)\n"
    assert get_parser("unittest")(log) == {"m.C.test_a": E}


JUNIT_LOG = """\
some text before
<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="5">
<testcase classname="tests.test_j.TestK" name="test_ok" time="0.1"/>
<testcase classname="tests.test_j.TestK" name="test_fail"><failure message="x">tb</failure></testcase>
<testcase classname="tests.test_j" name="test_err"><error message="y"/></testcase>
<testcase classname="tests.test_j" name="test_skip"><skipped message="s"/></testcase>
<testcase classname="tests.test_j" name="test_xf"><skipped type="pytest.xfail" message="x"/></testcase>
</testsuite></testsuites>
<testsuite name="broken"><testcase name="cut
"""


def test_junit_reads_reports_inside_a_log_and_skips_broken_ones() -> None:
    assert get_parser("junit")(JUNIT_LOG) == {
        "tests.test_j.TestK.test_ok": P, "tests.test_j.TestK.test_fail": F,
        "tests.test_j.test_err": E, "tests.test_j.test_skip": S, "tests.test_j.test_xf": X,
    }


def test_markers_without_nonce_behave_like_the_reference() -> None:
    log = "setup\n>>>>> Start Test Output\nPASSED a\n>>>>> End Test Output\nPASSED b\n>>>>> End Test Output\n"
    assert extract_test_output(log) == "\nPASSED a\n"
    assert extract_test_output("no markers here") is None
    assert extract_test_output(">>>>> Start Test Output\nPASSED a\n") is None


def test_markers_with_nonce_ignore_fakes_printed_by_the_code_under_test() -> None:
    nonce = "n0nce42"
    log = (
        f">>>>> Start Test Output {nonce}\n"
        "FAILED t::real\n"
        ">>>>> End Test Output\n"             # fake end: no nonce
        ">>>>> Start Test Output\nPASSED t::real\n"  # fake start and fake result
        f">>>>> End Test Output {nonce}x\n"   # wrong nonce (longer token)
        "FAILED t::other\n"
        f">>>>> End Test Output {nonce}\n"
        "PASSED t::after_end\n"
    )
    body = extract_test_output(log, nonce)
    assert body is not None
    assert "FAILED t::real" in body and "FAILED t::other" in body
    assert "after_end" not in body
    assert extract_test_output(">>>>> Start Test Output\nx\n>>>>> End Test Output\n", nonce) is None


def test_pytest_summary_read_through_forced_colour():
    """Real output of `pytest -rA --color=yes` (a project's addopts forcing colour): the status and
    the id are wrapped in ANSI codes, which are taken out before the lines are read."""
    from pathlib import Path

    from issuebench.parsers import get_parser

    log = (Path(__file__).parents[1] / "fixtures" / "parsers" / "pytest_forced_colour.txt").read_text()
    assert "\x1b[32mPASSED" in log
    for name in ("parse_log_pytest", "parse_log_pytest_options"):
        assert get_parser(name)(log) == {"test_c.py::test_ok": "PASSED", "test_c.py::test_bad": "FAILED"}


def test_pytest_summary_read_through_emoji_status_words():
    """Real output of `pytest -rA -v` under pytest-emoji (a project's addopts `--emoji`): a symbol
    stands between each status word and its id; the id is still read, and the skip count still
    names no test."""
    from pathlib import Path

    log = (Path(__file__).parents[1] / "fixtures" / "parsers" / "pytest_emoji.txt").read_text()
    assert "PASSED 😃  test_e.py::test_ok" in log
    expected = {"test_e.py::test_ok": P, "test_e.py::test_param[1]": P, "test_e.py::test_param[2]": P,
                "test_e.py::test_bad": F}
    for name in ("parse_log_pytest", "parse_log_pytest_options", "parse_log_pytest_v2",
                 "parse_log_pytest_v2_legacy"):
        assert get_parser(name)(log) == expected, name
