"""Issue text from failing tests: what was called and what happened, never the changed line."""

from __future__ import annotations

from issuebench.synth.coverage_map import OUTSIDE, CoverageMap, numbits_to_lines
from issuebench.synth.issue_text import write_issue
from issuebench.synth.output import yield_table

OUTPUT = """============================= test session starts ==============================
collected 3 items

tests/test_calc.py F.F                                                   [100%]

=================================== FAILURES ===================================
___________________________________ test_add ___________________________________
tests/test_calc.py:5: in test_add
    assert add(2, 3) == 5
calc/core.py:2: in add
    return a - b  # SECRET
E   assert -1 == 5
E    +  where -1 = add(2, 3)
_________________________________ TestX.test_y _________________________________
tests/test_calc.py:12: in test_y
    add(1, 1)
calc/core.py:2: in add
    return a - b  # SECRET
E   TypeError: boom
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert -1 == 5
"""


def test_issue_names_the_call_and_the_failure_but_not_the_changed_line():
    text = write_issue(["tests/test_calc.py::test_add", "tests/test_calc.py::TestX::test_y"], OUTPUT,
                       {"calc/core.py"})
    assert "assert add(2, 3) == 5" in text
    assert "assert -1 == 5" in text
    assert "SECRET" not in text and "core.py:2" not in text
    assert "calc/core.py: in add" in text
    assert "`tests/test_calc.py::TestX::test_y`" in text


def test_a_test_without_a_traceback_still_gets_a_statement():
    text = write_issue(["tests/test_calc.py::test_gone"], "nothing useful", {"calc/core.py"})
    assert "test_gone" in text


def test_coverage_map_reports_tests_and_import_time_code():
    assert numbits_to_lines(bytes([0b101, 0b1])) == [0, 2, 8]
    cmap = CoverageMap({"m.py": {1: {OUTSIDE}, 3: {"t::a"}, 4: {"t::a", "t::b"}}})
    assert cmap.tests_for("m.py", 3, 4) == {"t::a", "t::b"}
    assert cmap.tests_for("m.py", 1, 4) is None  # runs at import: every test may see it
    assert cmap.tests_for("m.py", 5, 9) == set()
    assert CoverageMap.from_json(cmap.to_json()).lines == cmap.lines
    # Code run while a test module is imported counts for that module's tests, not for all.
    cmap.lines["m.py"][6] = {"collect:t2.py"}
    everything = {"t::a", "t::b", "t2.py::c", "t2.py::K::d", "t3.py::e"}
    assert cmap.tests_for("m.py", 6, 6, everything) == {"t2.py::c", "t2.py::K::d"}
    assert cmap.tests_for("m.py", 4, 6, everything) == {"t::a", "t::b", "t2.py::c", "t2.py::K::d"}


def test_yield_table_counts_statuses_per_generator_and_in_total():
    rows = [{"generator": "op_flip", "status": "kept"}, {"generator": "op_flip", "status": "nothing_fails"},
            {"generator": "const", "status": "syntax_error"}]
    table = yield_table(rows)
    assert table["op_flip"]["candidates"] == 2 and table["op_flip"]["kept"] == 1
    assert table["total"] == {**table["total"], "candidates": 3, "kept": 1, "syntax_error": 1}
    assert list(table)[-1] == "total"


class _Client:
    def __init__(self, answer):
        self.answer = answer

    def query(self, messages):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_a_configured_model_rewords_the_issue_and_a_failed_call_falls_back():
    from issuebench.synth.issue_text import model_issue

    f2p = ["tests/test_calc.py::test_add"]
    assert model_issue(_Client("add(2, 3) returns -1"), f2p, OUTPUT, {"calc/core.py"}) == "add(2, 3) returns -1"
    assert model_issue(_Client(RuntimeError("down")), f2p, OUTPUT, {"calc/core.py"}) is None
