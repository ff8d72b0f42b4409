"""The pieces of issuebench.strength that need no sandbox: selection, comparison, mutants, coverage wiring."""

from __future__ import annotations

import ast
import json

from issuebench.models import EnvSpec, TestStatus
from issuebench.strength.covering import coverage_command, covering_spec, covering_tests
from issuebench.strength.mutants import OperatorFlip
from issuebench.strength.read import wider_counts
from issuebench.strength.select import changed_code, module_tests
from issuebench.strength.test_strength import sample
from issuebench.strength.wider import summary_section
from issuebench.strength.wider_checks import compare_runs, pool_spec

P, F, E, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR, TestStatus.SKIPPED

PATCH = """diff --git a/src/pkg/util.py b/src/pkg/util.py
--- a/src/pkg/util.py
+++ b/src/pkg/util.py
@@ -10,3 +10,3 @@ def f(x):
     a = 1
-    return x
+    return x + a
     # end
diff --git a/tests/test_util.py b/tests/test_util.py
--- a/tests/test_util.py
+++ b/tests/test_util.py
@@ -1,1 +1,2 @@
 import pkg
+assert pkg
"""


def test_changed_code_keeps_code_files_and_their_new_side_lines():
    code = changed_code(PATCH)
    assert code.files == ["src/pkg/util.py"]
    assert code.lines["src/pkg/util.py"] == {11}


def test_module_tests_names_first_then_the_packages_tests_folder_and_never_example_data():
    tests = ["tests/test_util.py", "tests/test_other.py", "src/pkg/tests/test_a.py", "src/pkg/tests/test_b.py",
             "testing/example_scripts/test_util.py", "tests/test_util_extra.py"]
    got = module_tests(["src/pkg/util.py"], tests)
    assert got[:2] == ["tests/test_util.py", "tests/test_util_extra.py"]
    assert set(got[2:]) == {"src/pkg/tests/test_a.py", "src/pkg/tests/test_b.py"}
    assert module_tests(["src/pkg/util.py"], tests, limit=1) == ["tests/test_util.py"]


def test_a_test_that_passes_with_gold_and_fails_or_vanishes_with_the_candidate_is_a_break():
    gold = {"graded": P, "a": P, "b": P, "c": P, "d": F, "e": S}
    cand = {"graded": F, "a": P, "b": E, "d": F, "e": F}
    res = compare_runs(gold, cand, {"graded"})
    assert res.breaks == ["b", "c"] and res.missing == ["c"]
    assert res.gold_failing == ["d"] and res.compared == 3


def test_the_summary_section_keeps_the_official_count_and_adds_a_stricter_one():
    res = compare_runs({"x": P}, {"x": F}, set())
    res.instance_id, res.status = "t-1", "checked"
    section = summary_section([res], ["t-1", "t-2"], "modules")
    assert section["strict_resolved_ids"] == ["t-2"] and section["breaks"] == {"t-1": ["x"]}


def test_pool_spec_runs_the_targets_with_the_tasks_own_directive_rule_and_the_same_environment():
    spec = EnvSpec(test_cmd="./tests/runtests.py", test_directives="django")
    pooled = pool_spec(spec, ["tests/queries/test_q.py"])
    assert pooled.test_cmd == "./tests/runtests.py queries.test_q" and pooled.test_directives == "none"
    assert pooled.env_hash() == spec.env_hash()
    assert pool_spec(EnvSpec(test_cmd="pytest -rA"), None).test_cmd == "pytest -rA"


SOURCE = """def pages(n, per):
    if n <= 0 and per:
        return 0
    return n // per + (1 if n % per else 0)
"""


def test_operator_flip_changes_one_token_on_the_given_lines_and_keeps_the_rest_byte_for_byte():
    mutants = list(OperatorFlip().mutants("m.py", SOURCE, {4}))
    descs = {m.description for m in mutants}
    assert "line 4: '//' -> '*'" in descs and "line 4: '+' -> '-'" in descs and "line 4: '0' -> '1'" in descs
    for m in mutants:
        ast.parse(m.text)  # every mutant is valid Python
        changed = [i for i, (a, b) in enumerate(zip(SOURCE.splitlines(), m.text.splitlines(), strict=True)) if a != b]
        assert changed == [3], m.description
    line2 = {m.description for m in OperatorFlip().mutants("m.py", SOURCE, {2})}
    assert line2 == {"line 2: '<=' -> '>'", "line 2: 'and' -> 'or'", "line 2: '0' -> '1'"}


def test_sampling_spreads_over_the_mutants_and_is_deterministic():
    mutants = list(OperatorFlip().mutants("m.py", SOURCE, {2, 3, 4}))
    assert sample(mutants, 3) == sample(list(reversed(mutants)), 3)
    assert len({m.line for m in sample(mutants, 3)}) >= 2


def test_coverage_wraps_each_kind_of_test_command():
    assert coverage_command("pytest -rA") == "python -m coverage run -m pytest -rA"
    assert coverage_command("python -m unittest -v") == "python -m coverage run -m unittest -v"
    assert coverage_command("PYTHONWARNINGS=ignore bin/test -C") == \
        "PYTHONWARNINGS=ignore python -m coverage run bin/test -C"
    spec = covering_spec(EnvSpec(test_cmd="pytest -rA"), {"src/a.py": {3, 1}})
    assert "dynamic_context = test_function" in spec.test_cmd and '"src/a.py": [1, 3]' in spec.test_cmd


def test_coverage_contexts_map_back_to_test_ids_of_each_runner():
    status = {"testing/test_x.py::TestA::test_one[1]": P, "testing/test_x.py::test_two": P,
              "tests.test_case.Acro.test_lead": P, "test_untouched": P}
    contexts = {"test_x.TestA.test_one", "tests.test_case.Acro.test_lead"}
    assert covering_tests(status, contexts) == ["testing/test_x.py::TestA::test_one[1]",
                                                "tests.test_case.Acro.test_lead"]


def test_report_reads_the_pass_from_a_summary_or_from_instance_folders(tmp_path):
    summary = tmp_path / "m.r.json"
    summary.write_text(json.dumps({"wider_tests": {"scope": "modules", "checked_instances": 2,
                                                   "breaks": {"t-1": ["x"]}}}))
    got = wider_counts(summary, [])
    assert got is not None and got.checked == 2 and got.breaking == {"t-1": ["x"]}
    (tmp_path / "sys" / "t-2").mkdir(parents=True)
    (tmp_path / "sys" / "t-2" / "wider_tests.json").write_text(json.dumps(
        {"instance_id": "t-2", "scope": "suite", "status": "checked", "breaks": ["y"]}))
    got = wider_counts(tmp_path / "sys", ["t-2", "t-3"])
    assert got is not None and got.scope == "suite" and got.breaking == {"t-2": ["y"]}
    assert wider_counts(tmp_path / "sys", ["t-3"]) is None


def test_an_unknown_wider_tests_scope_is_one_line_and_exit_2(tmp_path):
    from typer.testing import CliRunner

    from issuebench.cli.main import app

    result = CliRunner().invoke(app, ["eval", "-d", "demo", "-p", "gold", "--wider-tests", "everything",
                                      "-o", str(tmp_path)])
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "--wider-tests" in text and "Traceback" not in text
    assert not list(tmp_path.glob("*.json"))  # refused before anything ran


def test_the_terminal_lines_put_the_stricter_rate_beside_the_official_one_and_name_the_breaks():
    from issuebench.strength.post import lines
    from issuebench.strength.wider_checks import WiderResult

    breaking = WiderResult("t-1", "m", "modules", "checked", breaks=["tests/test_a.py::test_x"])
    clean = WiderResult("t-2", "m", "modules", "checked", compared=3)
    lost = WiderResult("t-3", "m", "modules", "gold_failed", reason="gold run env_failed: no wheel")
    section = summary_section([breaking, clean, lost], ["t-1", "t-2", "t-3"], "modules")
    text = lines({"m": (section, [breaking, clean, lost])}, {"m": 4})
    assert text[0].startswith("m: resolved 3/4 (75.0%); without breaking wider tests 2/4 (50.0%)")
    assert "1 not measurable" in text[0]
    assert "t-1: resolved, breaks 1 other test(s): tests/test_a.py::test_x" in text[1]
    assert "t-3: not measured (gold run env_failed: no wheel)" in text[2]
