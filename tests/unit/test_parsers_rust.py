"""`cargo test` on real output of a tiny crate built offline (fixture made by
scripts/parser_fixtures.sh)."""

from __future__ import annotations

from pathlib import Path

from issuebench.models import TestStatus
from issuebench.parsers import get_parser

P, F = TestStatus.PASSED, TestStatus.FAILED
FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"


def test_cargo_test_real_output() -> None:
    """Unit tests in modules and an integration test file; an ignored test is not recorded, as in
    the reference."""
    log = (FIXTURES / "cargo_test.txt").read_text(encoding="utf-8")
    assert get_parser("cargo")(log) == {
        "rules::eradicate::tests::comment_contains_todo": P,
        "rules::eradicate::tests::rule_commentedoutcode_path_new_era001_py_expects": F,
        "test_cksum::test_base64_raw_conflicts": P,
        "test_cksum::test_non_utf8_filename": F,
    }


def test_cargo_row_ids() -> None:
    """astral-sh__ruff-15330, tokio-rs__tokio-4384 and burntsushi__ripgrep-2209 ids."""
    log = ("test rules::eradicate::tests::rules::rule_commentedoutcode_path_new_era001_py_expects ... ok\n"
           "test net_types_are_unwind_safe ... FAILED\n"
           "test regression::r2208 ... ok\n"
           "test regression::r229 ... ignored\n"
           "test result: FAILED. 2 passed; 1 failed; 1 ignored\n")
    assert get_parser("cargo")(log) == {
        "rules::eradicate::tests::rules::rule_commentedoutcode_path_new_era001_py_expects": P,
        "net_types_are_unwind_safe": F,
        "regression::r2208": P,
    }
