"""C and C++ parsers: googletest, doctest and automake's `make check` on real output (fixtures made
by scripts/parser_fixtures.sh); redis's and micropython's runners cannot run here, so their lines
are written from the runners' documented output (the format each test names)."""

from __future__ import annotations

from pathlib import Path

from issuebench.models import TestStatus
from issuebench.parsers import get_parser

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED
FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_googletest_through_ctest_real_output() -> None:
    """`ctest -V -R printf-test` (fmt) over a googletest binary: ctest's `1: ` prefix is read past;
    a parametrized failure keeps googletest's `, where GetParam() = 3`; a skipped test and the
    summary lines (no duration) are not recorded, as in the reference."""
    assert get_parser("googletest")(fixture("gtest_ctest.txt")) == {
        "PrintfTest.NoArgs": P,
        "PrintfTest.MinusFlag": F,
        "format_test.format_int": P,
        "Sizes/Width.Pads/0": P,
        "Sizes/Width.Pads/1, where GetParam() = 3": F,
    }


def test_googletest_row_ids() -> None:
    """fmtlib__fmt-3248 ids in googletest's shape."""
    log = ("2: [       OK ] util_test.format_system_error (0 ms)\n"
           "2: [  FAILED  ] memory_buffer_test.move_assignment (1 ms)\n")
    assert get_parser("googletest")(log) == {"util_test.format_system_error": P,
                                             "memory_buffer_test.move_assignment": F}


def test_doctest_xml_real_output() -> None:
    """doctest 2.4.9 `-s -r=xml` (nlohmann/json): `case > subcase`, failed when an expression in
    the subcase failed; a case without subcases and a skipped case are not recorded."""
    assert get_parser("doctest")(fixture("doctest_xml.txt")) == {
        "basic usage > conversion to json via free-functions": F,
        "basic usage > conversion from json via free-functions": P,
    }


def test_doctest_cut_or_broken_report_gives_nothing() -> None:
    report = fixture("doctest_xml.txt")
    assert get_parser("doctest")(report[: len(report) // 2]) == {}
    assert get_parser("doctest")(report.replace("<TestSuite>", "<TestSuite><<")) == {}


def test_automake_make_check_real_output() -> None:
    """automake's test harness under `make check` (jq): PASS and FAIL lines; SKIP and XFAIL are not
    recorded, as in the reference."""
    assert get_parser("jq")(fixture("automake_check.txt")) == {
        "tests/jqtest": P, "tests/shtest": F, "tests/utf8test": P}
    # jqlang__jq-2650 ids (oniguruma's and jq's own tests).
    assert get_parser("jq")("PASS: test_utf8\nFAIL: regset\n  PASS: tests/jqtest\n") == {
        "test_utf8": P, "regset": F, "tests/jqtest": P}


def test_redis_result_lines() -> None:
    """Written from redis's Tcl test runner output (`[ok]: name (N ms)`, `[err]: name in file`,
    `[skip]:`, `[ignore]:`), with ids of redis__redis-10068 and valkey-io__valkey-1499."""
    log = ("[ok]: XTRIM with MINID option (12 ms)\n"
           "[err]: XTRIM with MINID option, big delta from master record in tests/unit/type/stream.tcl\n"
           "[skip]: TOUCH alters the last access time of a key in no-touch mode\n"
           "[ignore]: COMMAND GETKEYS MEMORY USAGE\n"
           "[ok]: BITOP AND|OR|XOR don't change the string with single input key (0 ms)\n"
           "[ok]: name with (parens) kept\n"
           "[ok]: \n")
    assert get_parser("redis")(log) == {
        "XTRIM with MINID option": P,
        "XTRIM with MINID option, big delta from master record": F,
        "TOUCH alters the last access time of a key in no-touch mode": S,
        "COMMAND GETKEYS MEMORY USAGE": S,
        "BITOP AND|OR|XOR don't change the string with single input key": P,
        "name with (parens) kept": P,
    }


def test_micropython_run_tests_lines() -> None:
    """Written from micropython's run-tests.py output (`pass  file`, `FAIL  file`, `skip  file`),
    with ids of micropython__micropython-10095."""
    log = ("pass  basics/fun_defargs.py\nFAIL  basics/fun_calldblstar.py\nskip  thread/stress_aes.py\n"
           "passed basics/not_a_result.py\n3 tests performed (120 individual testcases)\n")
    assert get_parser("micropython_test")(log) == {
        "basics/fun_defargs.py": P, "basics/fun_calldblstar.py": F, "thread/stress_aes.py": S}
