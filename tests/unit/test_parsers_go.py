"""`go test -v` on real output of Debian's go 1.19 (fixture made by scripts/parser_fixtures.sh)."""

from __future__ import annotations

from pathlib import Path

from issuebench.models import TestStatus
from issuebench.parsers import get_parser

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED
FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"


def test_go_test_verbose_real_output() -> None:
    """Top-level tests and subtests (indented, `Parent/sub`), skipped tests, go's spaces-to-`_`."""
    log = (FIXTURES / "go_test.txt").read_text(encoding="utf-8")
    assert get_parser("gotest")(log) == {
        "TestQueryFilter": P,
        "TestCookieFilter": F,
        "TestSkipped": S,
        "TestRegexpFilter": F,
        "TestRegexpFilter/plain": P,
        "TestRegexpFilter/with_space_(and_parens)": F,
    }


def test_go_row_ids() -> None:
    """caddyserver__caddy-4943 and hashicorp__terraform-34814 ids in go's shape."""
    log = ("--- PASS: TestCookieFilter (0.00s)\n    --- FAIL: TestProvisionerTimeout (10.02s)\n"
           "--- PASS: TestResourceProvider_Validate_good ()\n=== RUN   TestQueryFilter\n")
    assert get_parser("parse_log_gotest")(log) == {"TestCookieFilter": P, "TestProvisionerTimeout": F}
