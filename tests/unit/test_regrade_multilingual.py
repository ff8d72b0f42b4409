"""Regrade on saved logs of non-Python rows: the row's log_parser and eval_type decide, as in the
reference harness. The test output inside the logs is real jasmine and jest output
(tests/fixtures/parsers, made by scripts/parser_fixtures.sh)."""

from __future__ import annotations

import json
from pathlib import Path

from issuebench.models import InstanceStatus, Task
from issuebench.regrade import find_logs, regrade, regrade_log

FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"
MARKED_F2P = "New list_loose_tasks should pass"
NONCE = "5eed"


def _marked_task() -> Task:
    return Task(instance_id="markedjs__marked-1535", repo="markedjs/marked", base_commit="0" * 40,
                FAIL_TO_PASS=[MARKED_F2P], PASS_TO_PASS=[], log_parser="parse_log_marked",
                eval_type="fail_only")


def _reference_log(test_output: str) -> str:
    """test_output.txt as swebench 5 writes it: the eval script's `set -x` trace around the output."""
    return ("+ cd /testbed\n+ git checkout 2df12a7f test/specs/new/list_loose_tasks.md\n"
            "+ : '>>>>> Start Test Output'\n+ ./node_modules/.bin/jasmine --no-color --config=jasmine.json\n"
            f"{test_output}+ : '>>>>> End Test Output'\n+ rm -f test/specs/new/list_loose_tasks.md\n")


def _reference_report(instance_id: str, resolved: bool, f2p_failure: list[str]) -> dict:
    lists = {"success": [], "failure": []}
    return {instance_id: {
        "patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
        "resolved": resolved, "tests_status": {
            "FAIL_TO_PASS": {"success": [] if f2p_failure else [MARKED_F2P], "failure": f2p_failure},
            "PASS_TO_PASS": lists, "FAIL_TO_FAIL": lists, "PASS_TO_FAIL": lists}}}


def _instance_dir(root: Path, run: str, instance_id: str) -> Path:
    folder = root / "logs" / "run_evaluation" / run / "org__model" / instance_id
    folder.mkdir(parents=True)
    return folder


def test_reference_logs_of_a_fail_only_row_get_the_references_verdicts(tmp_path: Path) -> None:
    """marked (jasmine, fail_only): a run listing the FAIL_TO_PASS test among its failures is not
    resolved; a clean run lists no test at all and is resolved. The report.json files hold the
    verdicts swebench 5.0.2's own grading gives on these two logs."""
    runs = {"failing": (FIXTURES / "jasmine.txt", False, [MARKED_F2P]),
            "clean": (FIXTURES / "jasmine_clean.txt", True, [])}
    for run, (output, resolved, failure) in runs.items():
        folder = _instance_dir(tmp_path, run, "markedjs__marked-1535")
        (folder / "test_output.txt").write_text(_reference_log(output.read_text(encoding="utf-8")))
        (folder / "report.json").write_text(json.dumps(_reference_report("markedjs__marked-1535", resolved, failure)))
    for log in find_logs(tmp_path):
        reference = json.loads((log.instance_dir / "report.json").read_text())["markedjs__marked-1535"]
        ours = regrade_log(log, _marked_task())
        assert ours.resolved is reference["resolved"], log.run_id
        assert ours.patch_successfully_applied is True
        assert ours.tests_status is not None
        assert ours.tests_status.FAIL_TO_PASS.failure == reference["tests_status"]["FAIL_TO_PASS"]["failure"]
        assert ours.tests_status.FAIL_TO_PASS.success == reference["tests_status"]["FAIL_TO_PASS"]["success"]


def _our_log(test_output: str) -> str:
    return f">>>>> Start Test Output {NONCE}\n{test_output}>>>>> End Test Output {NONCE}\n"


def test_our_clean_run_of_a_fail_only_row_is_graded_not_unparseable(tmp_path: Path) -> None:
    """A fail_only parser finds nothing in a run where every test passed; the runner's own closing
    count (`1 spec, 0 failures`) shows the suite ran, so the row is graded (resolved), as the
    reference does. Without such a count the log stays unparseable."""
    clean = (FIXTURES / "jasmine_clean.txt").read_text(encoding="utf-8")
    folder = _instance_dir(tmp_path, "ours", "markedjs__marked-1535")
    (folder / "test_output.txt").write_text(_our_log(clean))
    result = regrade(tmp_path, [_marked_task()])
    [report] = result.reports
    assert report.status is InstanceStatus.RESOLVED, report.reason
    (folder / "test_output.txt").write_text(_our_log("Randomized with seed 1\nStarted\n"))
    [report] = regrade(tmp_path, [_marked_task()]).reports
    assert report.status is InstanceStatus.LOG_UNPARSEABLE
    # A pass_and_fail row needs results whatever the runner says.
    (folder / "test_output.txt").write_text(_our_log(clean))
    [report] = regrade(tmp_path, [_marked_task().model_copy(update={"eval_type": "pass_and_fail"})]).reports
    assert report.status is InstanceStatus.LOG_UNPARSEABLE


def test_regrade_gives_the_task_to_parsers_that_pick_a_format_by_row(tmp_path: Path) -> None:
    """immutable-js 2006 ran jest `--verbose`: a `[FAILED]` line of jest's JSON form in its log is
    not its result. Without the task both forms would be read and the later line would win."""
    task = Task(instance_id="immutable-js__immutable-js-2006", repo="immutable-js/immutable-js",
                base_commit="0" * 40, FAIL_TO_PASS=["fixed range"], PASS_TO_PASS=[],
                log_parser="parse_log_immutable_js", eval_type="pass_and_fail")
    folder = _instance_dir(tmp_path, "ours", task.instance_id)
    (folder / "test_output.txt").write_text(_our_log("  ✓ fixed range (3 ms)\n[FAILED] fixed range\n"))
    [report] = regrade(tmp_path, [task]).reports
    assert report.status is InstanceStatus.RESOLVED, report.reason
