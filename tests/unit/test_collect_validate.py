"""validate: the FAIL_TO_PASS / PASS_TO_PASS rules, flaky tests, and every rejection reason,
with a scripted runner standing in for the harness (the real harness: tests/integration)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

from issuebench.collect import pipeline as P
from issuebench.collect.validation import (
    classify,
    harness_runner,
    outside_test_files,
    validate,
    validate_task,
)
from issuebench.models import EnvSpec, InstanceStatus, PatchStatus, Task, TestStatus
from tests.gitrepo import init_repo

PASSED, FAILED, ERROR, SKIPPED = TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR, TestStatus.SKIPPED


@dataclass
class FakeRun:
    status: InstanceStatus = InstanceStatus.UNRESOLVED
    reason: str = ""
    status_map: dict = field(default_factory=dict)
    patch_status: PatchStatus | None = None
    durations: dict = field(default_factory=lambda: {"tests": 0.5})
    returncode: int | None = None


class Script:
    """Answers run i of each side from a list of status maps (or FakeRuns)."""

    def __init__(self, before, after) -> None:
        self.before, self.after = itertools.cycle(before), itertools.cycle(after)
        self.calls: list[bool] = []
        self.limits: list[float | None] = []

    def __call__(self, task: Task, model_patch: str | None, time_limit: float | None = None) -> FakeRun:
        gold = model_patch is not None
        self.calls.append(gold)
        self.limits.append(time_limit)
        item = next(self.after if gold else self.before)
        return item if isinstance(item, FakeRun) else FakeRun(status_map=item)


def _task(**kw) -> Task:
    base = dict(instance_id="o__r-1", repo="o/r", base_commit="a" * 40, patch="diff --git a/x b/x\n",
                test_patch="diff --git a/tests/t.py b/tests/t.py\n")
    return Task(**{**base, **kw})


def test_classify_lists() -> None:
    before = [{"t::f2p": FAILED, "t::p2p": PASSED, "t::broken": PASSED, "t::ff": FAILED, "t::skip": SKIPPED}] * 3
    after = [{"t::f2p": PASSED, "t::p2p": PASSED, "t::broken": ERROR, "t::ff": FAILED, "t::skip": PASSED,
              "t::new": PASSED}] * 3
    lists = classify(before, after)
    assert lists["FAIL_TO_PASS"] == ["t::f2p", "t::new"]  # missing before counts as failing
    assert lists["PASS_TO_PASS"] == ["t::p2p"]
    assert lists["broken"] == ["t::broken"]
    assert lists["flaky"] == []


def test_flaky_tests_are_dropped_and_counted() -> None:
    # t::rand passes in some before-runs and fails in others; t::late flips after the fix.
    before = [{"t::fix": FAILED, "t::rand": PASSED, "t::late": FAILED},
              {"t::fix": FAILED, "t::rand": FAILED, "t::late": FAILED}]
    after = [{"t::fix": PASSED, "t::rand": PASSED, "t::late": PASSED},
             {"t::fix": PASSED, "t::rand": PASSED, "t::late": FAILED}]
    verdict = validate_task(_task(), Script(before, after), repeats=3)
    assert verdict.kept
    assert verdict.task.FAIL_TO_PASS == ["t::fix"]
    assert sorted(verdict.flaky) == ["t::late", "t::rand"]
    assert "t::rand" not in verdict.task.PASS_TO_PASS
    assert verdict.runs == 6
    assert validate([_task()], Script(before, after)).table.flaky_tests == 2


def test_existing_lists_are_ignored_and_recomputed() -> None:
    task = _task(FAIL_TO_PASS=["t::stale"], PASS_TO_PASS=["t::old"])
    verdict = validate_task(task, Script([{"t::fix": FAILED}], [{"t::fix": PASSED}]), repeats=2)
    assert verdict.task.FAIL_TO_PASS == ["t::fix"] and verdict.task.PASS_TO_PASS == []
    assert task.FAIL_TO_PASS == ["t::stale"]  # the input row is not mutated


def test_gold_breaking_an_unrelated_test_is_rejected() -> None:
    verdict = validate_task(_task(), Script([{"t::fix": FAILED, "t::other": PASSED}],
                                            [{"t::fix": PASSED, "t::other": FAILED}]))
    assert not verdict.kept and verdict.reason == P.GOLD_BREAKS_TESTS and verdict.broken == ["t::other"]


def test_no_fail_to_pass_stops_after_the_first_pair_of_runs() -> None:
    script = Script([{"t::a": PASSED}], [{"t::a": PASSED}])
    verdict = validate_task(_task(), script, repeats=3)
    assert verdict.reason == P.NO_FAIL_TO_PASS and script.calls == [True, False]
    assert verdict.validated and verdict.task.PASS_TO_PASS == ["t::a"]


def test_a_collection_error_before_the_fix_counts_as_failing() -> None:
    unparseable = FakeRun(status=InstanceStatus.LOG_UNPARSEABLE, reason="ImportError")
    verdict = validate_task(_task(), Script([unparseable], [{"t::fix": PASSED}]), repeats=2)
    assert verdict.kept and verdict.task.FAIL_TO_PASS == ["t::fix"]


def test_the_unfixed_run_is_held_to_a_multiple_of_the_fixed_runs_time() -> None:
    slow_fix = FakeRun(status_map={"t::fix": PASSED}, durations={"tests": 30.0})
    script = Script([{"t::fix": FAILED}], [slow_fix])
    assert validate_task(_task(), script, repeats=2).kept
    # gold first, unlimited; then the unfixed code, at ten times the fixed run's 30 s
    assert script.calls == [True, False, True, False] and script.limits == [None, 300.0, None, 300.0]
    quick_fix = FakeRun(status_map={"t::fix": PASSED}, durations={"tests": 0.4})
    hang = FakeRun(InstanceStatus.TIMEOUT, "the run took longer than 60s")
    script = Script([hang], [quick_fix])
    verdict = validate_task(_task(), script)
    assert script.limits == [None, 60.0]  # never under a minute
    assert verdict.reason == P.TIMEOUT and "hang or crawl before the fix" in verdict.detail
    assert "0.4s" in verdict.detail


def test_run_failures_become_reasons() -> None:
    cases = {
        P.INSTALL_FAILED: (None, FakeRun(InstanceStatus.ENV_FAILED, "uv pip install failed")),
        P.TIMEOUT: (FakeRun(InstanceStatus.TIMEOUT, "killed after 5s"), None),
        P.GOLD_DOES_NOT_APPLY: (None, FakeRun(InstanceStatus.APPLY_FAILED, "hunk 1 failed")),
        P.TEST_PATCH_DOES_NOT_APPLY: (FakeRun(InstanceStatus.TEST_PATCH_FAILED, "test patch does not apply: x"), None),
        P.RUN_FAILED: (None, FakeRun(InstanceStatus.LOG_UNPARSEABLE, "no test results")),
    }
    for reason, (before, after) in cases.items():
        script = Script([before or {"t::fix": FAILED}], [after or {"t::fix": PASSED}])
        verdict = validate_task(_task(), script)
        assert (verdict.kept, verdict.reason) == (False, reason)
        assert verdict.detail
        assert verdict.set_up == (reason != P.INSTALL_FAILED)


def test_rows_without_test_or_code_change_are_rejected_without_running() -> None:
    script = Script([{}], [{}])
    assert validate_task(_task(test_patch=""), script).reason == P.NO_TEST_CHANGE
    assert validate_task(_task(patch=" "), script).reason == P.NO_CODE_CHANGE
    assert script.calls == []


def test_validate_table_counts_stages_and_reasons_in_parallel() -> None:
    def runner(task: Task, model_patch: str | None, time_limit: float | None = None) -> FakeRun:
        if task.instance_id.endswith("boom"):
            raise RuntimeError("harness crashed")
        if task.instance_id.endswith("env"):
            return FakeRun(InstanceStatus.ENV_FAILED, "no")
        fixed = model_patch is not None and task.instance_id.endswith("good")
        return FakeRun(status_map={"t::x": PASSED if fixed else FAILED})

    tasks = [_task(instance_id=f"o__r-{name}") for name in ("good", "bad", "env", "boom")]
    result = validate(tasks, runner, workers=2)
    assert [t.instance_id for t in result.kept] == ["o__r-good"]
    table = result.table.to_dict()
    assert table["stages"] == {"set up": 2, "validated": 2, "kept": 1}
    assert table["rejected"] == {P.INSTALL_FAILED: 1, P.NO_FAIL_TO_PASS: 1, P.RUN_FAILED: 1}
    merged = P.PipelineTable.from_dict({"stages": {"candidates": 9}, "rejected": {P.NO_TEST_CHANGE: 5}})
    assert merged.merge(result.table).to_dict()["rejected"][P.NO_TEST_CHANGE] == 5
    assert "| kept | 1 |" in merged.merge(result.table).markdown()


def test_pipeline_table_carried_on_by_validate_counts_each_stage_once():
    from issuebench.collect.pipeline import PipelineTable

    collected, validated = PipelineTable(), PipelineTable()
    collected.add("candidates", 5)
    collected.add("set up", 4)
    collected.reject("no test change")
    validated.add("set up", 3)
    validated.add("kept", 2)
    validated.reject("timeout")
    merged = collected.merge(validated).to_dict()
    assert merged["stages"] == {"candidates": 5, "set up": 3, "kept": 2}
    assert merged["rejected"] == {"no test change": 1, "timeout": 1}


def test_every_test_in_neither_list_is_named_with_why() -> None:
    before = [{"t::fix": FAILED, "t::rand": PASSED, "t::skip": SKIPPED, "t::dead": FAILED, "t::p2p": PASSED},
              {"t::fix": FAILED, "t::rand": FAILED, "t::skip": SKIPPED, "t::dead": ERROR, "t::p2p": PASSED}]
    after = [{"t::fix": PASSED, "t::rand": PASSED, "t::skip": SKIPPED, "t::dead": FAILED, "t::p2p": PASSED}] * 2
    verdict = validate_task(_task(), Script(before, after), repeats=2)
    assert verdict.kept and verdict.task.PASS_TO_PASS == ["t::p2p"]
    assert set(verdict.dropped) == {"t::rand", "t::skip", "t::dead"}
    assert verdict.dropped["t::rand"] == "flaky across repeats (before: PASSED,FAILED; after: PASSED,PASSED)"
    assert verdict.dropped["t::skip"].startswith("skipped or xfail")
    assert verdict.dropped["t::dead"].startswith("fails before and after (before: FAILED,ERROR")
    assert len(verdict.before) == len(verdict.after) == 2  # what validate saw, kept for the user
    # sympy's parser names a failing test twice, `path:name` from the failure's header: gone after
    header = validate_task(_task(), Script([{"t::fix": FAILED, "t.py:fix": FAILED}], [{"t::fix": PASSED}]),
                           repeats=1)
    assert header.dropped["t.py:fix"] == "failing, and only in the before-runs (before: FAILED; after: missing)"


def test_ids_outside_the_test_patch_files_are_in_neither_list() -> None:
    # testing/test_run.py runs pytest inside; the inner session prints its own `path::test` lines.
    task = _task(test_patch="diff --git a/testing/test_run.py b/testing/test_run.py\n")
    before = [{"testing/test_run.py::test_new": FAILED, "testing/test_run.py::test_old": PASSED,
               "test_inner.py::test_a": PASSED, "test_log_cli.py": PASSED, "[": PASSED}]
    after = [{"testing/test_run.py::test_new": PASSED, "testing/test_run.py::test_old": PASSED,
              "test_inner.py::test_a": PASSED, "test_log_cli.py": PASSED, "[": PASSED}]
    verdict = validate_task(task, Script(before, after), repeats=1)
    assert verdict.task.FAIL_TO_PASS == ["testing/test_run.py::test_new"]
    # the reference's parser keeps junk ids such as `[` too: they are not paths, so they stay
    assert verdict.task.PASS_TO_PASS == ["[", "testing/test_run.py::test_old"]
    assert verdict.dropped["test_inner.py::test_a"] == (
        "outside the test patch's files (before: PASSED; after: PASSED)")
    assert "test_log_cli.py" in verdict.dropped


def test_ids_that_are_not_paths_from_the_root_are_not_judged_by_file() -> None:
    names = ["test_div (tests.Arith)", "test_pow", "sub/tests/test_a.py::test_x"]
    assert outside_test_files(names, ["tests/test_a.py"]) == set()  # no id names a test file
    assert outside_test_files([*names, "tests/test_a.py::t"], ["tests/test_a.py"]) == {"sub/tests/test_a.py::test_x"}


def test_the_recipe_is_dated_as_eval_dates_it_from_the_clone(tmp_path: Path) -> None:
    # environment_setup_commit's date, read from the clone, as eval does: not the row's created_at.
    repo = tmp_path / "repos" / "o__r"
    setup_sha = init_repo(repo, {"a.py": "x = 1\n"}, date="2021-03-04T05:06:07+00:00")
    recipe = EnvSpec(python="3.11", test_cmd="pytest -rA", exclude_newer_source="environment_setup_commit")
    _, with_env = harness_runner(repos_dir=tmp_path / "repos", recipe=recipe, no_sandbox=True,
                                 work_dir=tmp_path / "work")
    task = with_env(_task(base_commit=setup_sha, environment_setup_commit=setup_sha,
                          created_at="2023-01-01T00:00:00Z"))
    assert task.env is not None and task.env.exclude_newer.startswith("2021-03-04")


def test_a_gold_run_that_exits_nonzero_with_no_failing_test_rejects_the_task() -> None:
    # yarl: every test passes with the gold patch, but coverage's fail-under exits 1, and eval never
    # resolves such a run.
    after = FakeRun(status_map={"t::fix": PASSED}, returncode=1)
    verdict = validate_task(_task(), Script([{"t::fix": FAILED}], [after]), repeats=2)
    assert not verdict.kept and verdict.reason == "test run failed"
    assert "exits 1 and no test fails" in verdict.detail


def test_a_kept_row_says_why_it_falls_short_of_a_verified_task() -> None:
    new_file = "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n" \
               "+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n+def test_fix():\n+    pass\n"
    task = _task(test_patch=new_file, problem_statement="Fix the widget")
    # Absent from every before-run: the module could not import what the fix adds.
    verdict = validate_task(task, Script([{"tests/test_new.py": ERROR}], [{"tests/test_new.py::test_fix": PASSED}]),
                            repeats=2)
    assert verdict.kept
    assert verdict.task.model_extra["quality_flags"] == [
        "no PASS_TO_PASS: every test file of the test patch is new",
        "FAIL_TO_PASS fail only to import before the fix (not collected in any before-run)",
        "one-line problem statement"]
    clean = validate_task(_task(problem_statement="It breaks.\nSteps: call f(1)."),
                          Script([{"t::fix": FAILED, "t::p": PASSED}], [{"t::fix": PASSED, "t::p": PASSED}]), repeats=2)
    assert clean.kept and clean.task.model_extra["quality_flags"] == []


def test_an_install_failure_says_why_setup_found_no_recipe(tmp_path, monkeypatch) -> None:
    import json as _json

    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path))
    (tmp_path / "setup-fallback").mkdir()
    (tmp_path / "setup-fallback" / "o__r@1.2.json").write_text(_json.dumps(
        {"accepted": False, "reason": "no attempt ran the tests (incompatible_dependency)"}))
    failed = FakeRun(status=InstanceStatus.ENV_FAILED, reason="no environment recipe for repository o/r")
    verdict = validate_task(_task(version="1.2"), Script([failed], [failed]), repeats=1)
    assert verdict.reason == "install failed"
    assert verdict.detail.startswith("setup of o/r 1.2 found no recipe: no attempt ran the tests (incompatible")


def test_no_fail_to_pass_names_the_test_modules_that_never_import() -> None:
    # cf-xarray: its test module opens tutorial datasets from the internet when imported, so
    # neither side collects a test; the rejection says so rather than leaving it unexplained.
    task = _task(test_patch="diff --git a/tests/test_accessor.py b/tests/test_accessor.py\n")
    runs = [{"tests/test_accessor.py": ERROR}]
    verdict = validate_task(task, Script(runs, runs), repeats=2)
    assert verdict.reason == P.NO_FAIL_TO_PASS
    assert verdict.detail == "with the fix too, test modules failed to import: tests/test_accessor.py"
    # A module that imports once the fix is in makes no such account.
    fixed = validate_task(task, Script(runs, [{"tests/test_accessor.py::test_x": PASSED}]), repeats=2)
    assert fixed.kept and "failed to import" not in fixed.detail
