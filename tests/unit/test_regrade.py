"""Regrade: saved logs (ours and the reference's) -> the same verdicts, with nothing run."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.errors import IssuebenchError
from issuebench.models import InstanceReport, InstanceStatus, Task
from issuebench.regrade import find_logs, log_kind, regrade, regrade_log, repo_from_instance_id

NONCE = "c0ffee"
F2P = ["tests/test_m.py::test_fix"]
P2P = ["tests/test_m.py::test_old"]


def _task(instance_id: str = "acme__widget-1", repo: str = "acme/widget", **extra) -> Task:
    return Task(instance_id=instance_id, repo=repo, base_commit="0" * 40, FAIL_TO_PASS=F2P,
                PASS_TO_PASS=P2P, **extra)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _our_log(body: str) -> str:
    return f">>>>> Start Test Output {NONCE}\n{body}\n>>>>> End Test Output {NONCE}\n"


def _run_dir(root: Path, instance_id: str = "acme__widget-1") -> Path:
    return root / "logs" / "run_evaluation" / "run1" / "org__model" / instance_id


def test_our_log_is_graded_from_the_nonce_section_only(tmp_path: Path) -> None:
    # The code under test printed fake markers: they neither end the section nor start a new one.
    body = ("FAILED tests/test_m.py::test_fix - assert 0\nPASSED tests/test_m.py::test_old\n"
            ">>>>> End Test Output\n>>>>> Start Test Output\nPASSED tests/test_m.py::test_fix\n")
    _write(_run_dir(tmp_path) / "test_output.txt", _our_log(body) + "PASSED tests/test_m.py::test_fix\n")
    [log] = find_logs(tmp_path)
    assert (log.run_id, log.model, log.instance_id) == ("run1", "org__model", "acme__widget-1")
    report = regrade_log(log, _task())
    # The whole nonce section is read (later lines win, as in pytest's summary)...
    assert report.tests_status is not None
    assert report.tests_status.FAIL_TO_PASS.success == F2P
    # ...and nothing after the nonce end marker is.
    tail_only = _our_log("FAILED tests/test_m.py::test_fix\nPASSED tests/test_m.py::test_old\n") \
        + "PASSED tests/test_m.py::test_fix\n"
    _write(_run_dir(tmp_path) / "test_output.txt", tail_only)
    report = regrade_log(log, _task())
    assert report.status is InstanceStatus.UNRESOLVED
    assert report.tests_status.FAIL_TO_PASS.failure == F2P


def test_regrade_writes_reports_and_summary_in_the_same_layout(tmp_path: Path) -> None:
    logs = tmp_path / "in"
    _write(_run_dir(logs) / "test_output.txt",
           _our_log("PASSED tests/test_m.py::test_fix\nPASSED tests/test_m.py::test_old\n"))
    _write(_run_dir(logs, "acme__widget-2") / "test_output.txt",
           _our_log("FAILED tests/test_m.py::test_fix\nPASSED tests/test_m.py::test_old\n"))
    out = tmp_path / "out"
    result = regrade(logs, [_task(), _task("acme__widget-2"), _task("acme__widget-3")], out)
    assert [r.status for r in result.reports] == [InstanceStatus.RESOLVED, InstanceStatus.UNRESOLVED]
    report = json.loads((_run_dir(out) / "report.json").read_text())
    assert report["acme__widget-1"]["resolved"] is True
    assert report["acme__widget-1"]["tests_status"]["FAIL_TO_PASS"]["success"] == F2P
    [summary_path] = result.summaries
    assert summary_path == out / "org__model.run1.json"
    summary = json.loads(summary_path.read_text())
    assert summary["resolved_ids"] == ["acme__widget-1"]
    assert summary["unresolved_ids"] == ["acme__widget-2"]
    assert summary["total_instances"] == 3 and summary["incomplete_ids"] == ["acme__widget-3"]


REFERENCE_2_LOG = """\
+ git apply -v -
Checking patch tests/test_views.py...
Applied patch tests/test_views.py cleanly.
+ ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 app.tests
test_fix (app.tests.ViewTests) ... ok
test_old (app.tests.ViewTests) ... ok
test_skipped (app.tests.ViewTests) ... skipped 'no db'
"""


def _django_task(**extra) -> Task:
    return Task(instance_id="django__django-99", repo="django/django", base_commit="0" * 40,
                FAIL_TO_PASS=["test_fix (app.tests.ViewTests)"],
                PASS_TO_PASS=["test_old (app.tests.ViewTests)", "test_skipped (app.tests.ViewTests)"],
                **extra)


def test_reference_log_without_markers_uses_the_2024_rule(tmp_path: Path) -> None:
    path = _write(tmp_path / "django__django-99" / "test_output.txt", REFERENCE_2_LOG)
    [log] = find_logs(tmp_path)
    assert log_kind(REFERENCE_2_LOG) == "reference-2"
    report = regrade_log(log, _django_task())
    assert report.resolved
    # swebench 2.x: a skipped PASS_TO_PASS test lands in neither list.
    assert report.tests_status.PASS_TO_PASS.success == ["test_old (app.tests.ViewTests)"]
    assert report.tests_status.PASS_TO_PASS.failure == []
    current = regrade_log(log, _django_task(), rule="current")
    assert "test_skipped (app.tests.ViewTests)" in current.tests_status.PASS_TO_PASS.success
    path.write_text(REFERENCE_2_LOG + ">>>>> Patch Apply Failed\n")
    failed = regrade_log(log, _django_task())
    assert failed.status is InstanceStatus.APPLY_FAILED and not failed.patch_successfully_applied


def test_reference_log_with_markers_uses_the_swebench4_rule(tmp_path: Path) -> None:
    text = ("pip noise\nPASSED tests/test_m.py::test_fix\n>>>>> Start Test Output\n"
            "SKIPPED tests/test_m.py::test_fix\nPASSED tests/test_m.py::test_old\n>>>>> End Test Output\n")
    _write(tmp_path / "acme__widget-1" / "test_output.txt", text)
    [log] = find_logs(tmp_path)
    # The reference of that time let a skipped FAIL_TO_PASS test through; "current" does not.
    assert regrade_log(log, _task()).resolved
    assert not regrade_log(log, _task(), rule="current").resolved
    assert not regrade_log(log, _task(), strict=True).resolved


def test_a_failed_run_keeps_its_status_when_the_log_is_empty(tmp_path: Path) -> None:
    inst = _run_dir(tmp_path)
    _write(inst / "test_output.txt", "")
    previous = InstanceReport(instance_id="acme__widget-1", model_name_or_path="org/model",
                              status=InstanceStatus.APPLY_FAILED, reason="does not apply")
    _write(inst / "result.json", previous.model_dump_json())
    [log] = find_logs(tmp_path)
    report = regrade_log(log, _task())
    assert report.status is InstanceStatus.APPLY_FAILED and report.reason == "does not apply"


def test_unknown_instances_and_empty_folders_get_clear_answers(tmp_path: Path) -> None:
    _write(tmp_path / "logs" / "other__thing-5" / "test_output.txt", _our_log("PASSED x\n"))
    result = regrade(tmp_path / "logs", [_task()])
    assert result.reports[0].status is InstanceStatus.ERROR
    assert "not in the dataset" in result.reports[0].reason
    (tmp_path / "empty").mkdir()
    with pytest.raises(IssuebenchError, match=r"no test_output\.txt"):
        regrade(tmp_path / "empty", [_task()])
    with pytest.raises(IssuebenchError, match="unknown grading rule"):
        regrade(tmp_path / "logs", [_task()], rule="v7")
    with pytest.raises(IssuebenchError, match="logs folder itself"):
        regrade(tmp_path / "logs", [_task()], tmp_path / "logs")


def test_repo_from_instance_id() -> None:
    assert repo_from_instance_id("scikit-learn__scikit-learn-12421") == "scikit-learn/scikit-learn"


def test_cli_regrade_writes_the_output(tmp_path: Path) -> None:
    logs = tmp_path / "in"
    _write(_run_dir(logs) / "test_output.txt",
           _our_log("PASSED tests/test_m.py::test_fix\nPASSED tests/test_m.py::test_old\n"))
    dataset = _write(tmp_path / "tasks.jsonl", json.dumps(_task().model_dump(mode="json")) + "\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["regrade", "--logs", str(logs), "--dataset", str(dataset),
                                      "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "1 resolved" in result.output
    assert (out / "org__model.run1.json").is_file()
    bad = CliRunner().invoke(app, ["regrade", "--logs", str(tmp_path / "nope"), "--dataset", str(dataset)])
    assert bad.exit_code == 2 and "no such folder" in " ".join(bad.output.split())


def _conformance_module():
    path = Path(__file__).resolve().parents[2] / "scripts" / "check_conformance.py"
    spec = importlib.util.spec_from_file_location("check_conformance", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _reference_report(resolved: bool, f2p_success: list[str], f2p_failure: list[str]) -> dict:
    empty = {"success": [], "failure": []}
    return {"django__django-99": {
        "patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
        "resolved": resolved, "tests_status": {
            "FAIL_TO_PASS": {"success": f2p_success, "failure": f2p_failure},
            "PASS_TO_PASS": {"success": ["test_old (app.tests.ViewTests)"], "failure": []},
            "FAIL_TO_FAIL": empty, "PASS_TO_FAIL": empty}}}


def test_conformance_script_reports_agreement_and_disagreement(tmp_path: Path, capsys) -> None:
    check = _conformance_module()
    inst = tmp_path / "django__django-99"
    _write(inst / "test_output.txt", REFERENCE_2_LOG)
    _write(inst / "report.json", json.dumps(_reference_report(True, ["test_fix (app.tests.ViewTests)"], [])))
    assert check.main([str(tmp_path)]) == 0
    assert "agreement: 1/1" in capsys.readouterr().out
    _write(inst / "report.json", json.dumps(_reference_report(False, [], ["test_fix (app.tests.ViewTests)"])))
    assert check.main([str(tmp_path), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["agree"] == 0
    assert any("reference says failure" in line for line in data["instances"][0]["differences"])


def test_parser_override_and_row_parser_are_used(tmp_path: Path) -> None:
    # A unittest log for a repo the reference does not know: the row's log_parser reads it.
    text = _our_log("test_fix (pkg.tests.T) ... ok\ntest_old (pkg.tests.T) ... FAIL\n")
    _write(_run_dir(tmp_path) / "test_output.txt", text)
    task = Task(instance_id="acme__widget-1", repo="acme/widget", base_commit="0" * 40,
                FAIL_TO_PASS=["pkg.tests.T.test_fix"], PASS_TO_PASS=["pkg.tests.T.test_old"],
                log_parser="unittest")
    [report] = regrade(tmp_path, [task]).reports
    assert report.tests_status.FAIL_TO_PASS.success == ["pkg.tests.T.test_fix"]
    assert report.tests_status.PASS_TO_PASS.failure == ["pkg.tests.T.test_old"]
    # Forcing pytest's parser finds no results: the log is unparseable, not "unresolved".
    [forced] = regrade(tmp_path, [task], parser_name="pytest").reports
    assert forced.status is InstanceStatus.LOG_UNPARSEABLE
    with pytest.raises(IssuebenchError, match="unknown log parser"):
        regrade(tmp_path, [task], parser_name="nose")


def test_our_log_cut_before_its_end_marker_is_unparseable(tmp_path: Path) -> None:
    _write(_run_dir(tmp_path) / "test_output.txt", f">>>>> Start Test Output {NONCE}\nPASSED a\n")
    [report] = regrade(tmp_path, [_task()]).reports
    assert report.status is InstanceStatus.LOG_UNPARSEABLE
    assert "nonce" in report.reason


def test_reference_section_without_results_falls_back_to_the_whole_log(tmp_path: Path) -> None:
    # pytest wrote its summary to stderr, which landed after the end marker (as on some hosts).
    text = (">>>>> Start Test Output\ncollected 2 items\n>>>>> End Test Output\n"
            "PASSED tests/test_m.py::test_fix\nPASSED tests/test_m.py::test_old\n")
    _write(tmp_path / "acme__widget-1" / "test_output.txt", text)
    [report] = regrade(tmp_path, [_task()]).reports
    assert report.resolved
    assert not any(tmp_path.glob("**/report.json"))  # no --output: nothing written
