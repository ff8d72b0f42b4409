import json

from issuebench.harness.artifacts import RunLayout, read_instance_result, write_instance_result
from issuebench.harness.summary import write_summary
from issuebench.models import InstanceReport, InstanceStatus, ListResult, TestsStatus

REFERENCE_KEYS = {"total_instances", "submitted_instances", "completed_instances", "resolved_instances",
                  "unresolved_instances", "empty_patch_instances", "error_instances", "completed_ids",
                  "incomplete_ids", "empty_patch_ids", "submitted_ids", "resolved_ids", "unresolved_ids",
                  "error_ids", "schema_version"}


def report(iid, status, resolved=False):
    ts = TestsStatus(FAIL_TO_PASS=ListResult(success=["t"] if resolved else [], failure=[] if resolved else ["t"]))
    return InstanceReport(instance_id=iid, model_name_or_path="org/model", status=status, resolved=resolved,
                          tests_status=ts if status.completed else None)


def test_summary_has_reference_keys_and_buckets(tmp_path):
    reports = [report("a", InstanceStatus.RESOLVED, True), report("b", InstanceStatus.UNRESOLVED),
               report("c", InstanceStatus.EMPTY), report("d", InstanceStatus.APPLY_FAILED),
               report("e", InstanceStatus.TIMEOUT)]
    path = write_summary(reports, run_id="r1", model="org/model", output_dir=tmp_path,
                         dataset_ids=list("abcdefg"), submitted_ids=list("abcde"))
    assert path.name == "org__model.r1.json"
    data = json.loads(path.read_text())
    assert data.keys() >= REFERENCE_KEYS
    assert data["resolved_ids"] == ["a"] and data["unresolved_ids"] == ["b"]
    assert data["completed_ids"] == ["a", "b"] and data["empty_patch_ids"] == ["c"]
    # The reference puts a patch that does not apply and a timeout in error_ids.
    assert data["error_ids"] == ["d", "e"]
    assert data["incomplete_ids"] == ["f", "g"]
    assert data["total_instances"] == 7 and data["submitted_instances"] == 5
    assert data["status_counts"]["timeout"] == 1


def test_report_json_only_when_tests_ran(tmp_path):
    layout = RunLayout(tmp_path, "r1")
    done = layout.instance_dir("org/model", "a")
    write_instance_result(done, report("a", InstanceStatus.RESOLVED, True))
    ref = json.loads((done / "report.json").read_text())
    assert ref["a"]["resolved"] is True and ref["a"]["tests_status"]["FAIL_TO_PASS"]["success"] == ["t"]
    assert "org__model" in str(done)
    failed = layout.instance_dir("org/model", "d")
    write_instance_result(failed, report("d", InstanceStatus.APPLY_FAILED))
    assert not (failed / "report.json").exists()
    assert read_instance_result(failed).status is InstanceStatus.APPLY_FAILED


def test_a_task_whose_test_patch_fails_lands_in_error_ids_like_the_reference(tmp_path):
    path = write_summary([report("x", InstanceStatus.TEST_PATCH_FAILED)], run_id="r", model="m",
                         output_dir=tmp_path, dataset_ids=["x"], submitted_ids=["x"])
    data = json.loads(path.read_text())
    assert data["error_ids"] == ["x"] and data["status_counts"] == {"test_patch_failed": 1}
