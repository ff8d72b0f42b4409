"""Java parsers: Maven on real output (offline, from a local repository holding surefire and
JUnit 5; fixture made by scripts/parser_fixtures.sh). Lombok's Ant formatter and the rows' Gradle
test logging cannot run here (Debian's Gradle is too old for this JDK, lombok's formatter is
lombok's code), so their lines are written from those tools' documented output."""

from __future__ import annotations

from pathlib import Path

from issuebench.models import TestStatus
from issuebench.parsers import get_parser

P, F = TestStatus.PASSED, TestStatus.FAILED
FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"
TEST = "com.google.gson.JsonTreeReaderTest#"


def test_maven_one_run_per_test_real_output() -> None:
    """`mvn test -Dtest=...` chained with && under `set -x`, as the gson rows run it: each traced
    command names its test and the next BUILD line its result, even when maven's colour reset
    glues the trace onto the previous line; the test after the failure never ran."""
    log = (FIXTURES / "maven_per_test.txt").read_text(encoding="utf-8")
    assert get_parser("maven")(log) == {
        TEST + "testSkipValue_emptyJsonObject": P,
        TEST + "testSkipValue_filledJsonObject": F,
    }


def test_maven_pairs_results_that_come_before_their_command() -> None:
    """apache__druid-13704 ids; interleaved output puts a BUILD line before its traced command."""
    druid = "org.apache.druid.query.aggregation.post.ArithmeticPostAggregatorTest#"
    log = ("[INFO] BUILD SUCCESS\n"
           f"+ mvnd test -B -pl processing -Dtest={druid}testPow\n"
           f"+ mvnd test -B -pl processing -Dtest={druid}testDiv\n[INFO] BUILD FAILURE\n")
    assert get_parser("maven")(log) == {druid + "testPow": F, druid + "testDiv": P}


def test_ant_lombok_formatter_lines() -> None:
    """Written from lombok's JUnit formatter under Ant (`[junit] [PASS] name`), projectlombok ids."""
    log = ("    [junit] [PASS] javac-Accessors.java(lombok.transform.TestWithDelombok)\n"
           "    [junit] [FAIL] javac-ValInLambda.java(lombok.transform.TestWithDelombok)\n"
           "    [junit] [ERR] javac-GetterLazy.java(lombok.transform.TestWithDelombok)\n"
           "    [junit] Tests run: 3, Failures: 1, Errors: 1\n    [junit][PASS] glued\n")
    assert get_parser("ant")(log) == {
        "javac-Accessors.java(lombok.transform.TestWithDelombok)": P,
        "javac-ValInLambda.java(lombok.transform.TestWithDelombok)": F,
        "javac-GetterLazy.java(lombok.transform.TestWithDelombok)": F,
    }


def test_gradle_test_logging_lines() -> None:
    """Written from Gradle's test logging (`Class > method PASSED`), apache__lucene-12212 ids; a
    name and its status split by interleaved output are joined; SKIPPED is not recorded."""
    cls = "org.apache.lucene.facet.TestDrillSideways"
    log = (f"{cls} > testScorer PASSED\n"
           f"{cls} > testDrillSidewaysSearchUseCorrectIterator FAILED\n"
           f"{cls} > testNoCaching\nWARNING: A terminally deprecated method was called\nPASSED\n"
           f"{cls} > testSometimesInvalidDrillDown SKIPPED\n> Task :lucene:facet:test FAILED\n")
    assert get_parser("gradle_custom")(log) == {
        f"{cls} > testScorer": P,
        f"{cls} > testDrillSidewaysSearchUseCorrectIterator": F,
        f"{cls} > testNoCaching": P,
    }
