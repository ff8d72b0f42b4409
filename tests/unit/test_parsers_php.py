"""PHPUnit `--testdox --colors=never` on real output of Debian's PHPUnit 9.6 (fixture made by
scripts/parser_fixtures.sh)."""

from __future__ import annotations

from pathlib import Path

from issuebench.models import TestStatus
from issuebench.parsers import get_parser

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED
FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"


def test_phpunit_testdox_real_output() -> None:
    """`Class > test` ids; data sets named and numbered; an error reads as failed; skipped is
    `↩`; an incomplete test (`∅`) is not recorded. The summary repeats failures, same verdicts."""
    log = (FIXTURES / "phpunit_testdox.txt").read_text(encoding="utf-8")
    assert get_parser("phpunit")(log) == {
        "Round > Round with default unit": P,
        "Round > Floor year": F,
        "Round > Round with strings exception": F,
        "Round > Round with interval": S,
        'Round > Function prefix with data set "Basic Legacy Function"': P,
        'Round > Function prefix with data set "DAYS/NETWORKDAYS 5"': F,
        "Round > Function prefix with data set #0": P,
    }


def test_phpunit_row_ids() -> None:
    """php-cs-fixer__php-cs-fixer-7523 and laravel__framework-46234 ids in testdox's shape."""
    log = ("Binary Operator Spaces Fixer (PhpCsFixer\\Tests\\Fixer\\Operator\\BinaryOperatorSpacesFixer)\n"
           ' ✘ Fix defaults with data set "reference in functions declarations"\n'
           " ✔ With tabs with data set #0\n\n"
           "Routing Url Generator (Illuminate\\Tests\\Routing\\RoutingUrlGenerator)\n"
           " ✔ When previous is equal to current\n")
    assert get_parser("phpunit")(log) == {
        'Binary Operator Spaces Fixer > Fix defaults with data set "reference in functions declarations"': F,
        "Binary Operator Spaces Fixer > With tabs with data set #0": P,
        "Routing Url Generator > When previous is equal to current": P,
    }
