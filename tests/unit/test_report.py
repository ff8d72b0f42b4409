"""`report` over run folders this test writes, in our layout and in the reference's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.analysis.report import build_report, report_from_paths, to_csv, to_markdown
from issuebench.analysis.runs import load_runs
from issuebench.cli.main import app
from issuebench.errors import InputError
from issuebench.models import InstanceReport, InstanceStatus, ListResult, Outcome, Task, TestsStatus


def make_status(f2p_ok: int, f2p_bad: int, p2p_ok: int, p2p_bad: int) -> TestsStatus:
    return TestsStatus(
        FAIL_TO_PASS=ListResult(success=[f"f{i}" for i in range(f2p_ok)], failure=[f"g{i}" for i in range(f2p_bad)]),
        PASS_TO_PASS=ListResult(success=[f"p{i}" for i in range(p2p_ok)], failure=[f"q{i}" for i in range(p2p_bad)]),
    )


def write_reference_instance(folder: Path, iid: str, ts: TestsStatus | None, *, resolved: bool,
                             applied: bool = True) -> None:
    d = folder / iid
    d.mkdir(parents=True)
    (d / "run_instance.log").write_text("log\n")
    if ts is None:
        return  # the reference leaves no report when the patch fails to apply
    body = {"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": applied,
            "resolved": resolved, "tests_status": ts.model_dump()}
    (d / "report.json").write_text(json.dumps({iid: body}))


def write_our_instance(folder: Path, rep: InstanceReport) -> None:
    d = folder / rep.instance_id
    d.mkdir(parents=True)
    (d / "report.json").write_text(json.dumps(rep.to_reference()))
    (d / "result.json").write_text(rep.model_dump_json())


@pytest.fixture
def reference_folder(tmp_path: Path) -> Path:
    logs = tmp_path / "reference-logs"
    write_reference_instance(logs, "octo__lib-1", make_status(2, 0, 3, 0), resolved=True)
    write_reference_instance(logs, "octo__lib-2", make_status(0, 2, 3, 0), resolved=False)   # No-Op
    write_reference_instance(logs, "octo__lib-3", make_status(1, 1, 2, 1), resolved=False)   # WIP
    write_reference_instance(logs, "octo__lib-4", make_status(2, 0, 2, 1), resolved=False)   # Breaking
    write_reference_instance(logs, "acme__tool-7", make_status(0, 1, 0, 2), resolved=False)  # Regression
    write_reference_instance(logs, "acme__tool-8", None, resolved=False)                      # no report
    return logs


def our_output(tmp_path: Path, model: str = "org/agent-x", run_id: str = "r1",
               resolved: tuple[str, ...] = ("octo__lib-1", "octo__lib-2"), cost: float = 0.5) -> Path:
    out = tmp_path / "out"
    model_dir = out / "logs" / "run_evaluation" / run_id / model.replace("/", "__")
    ids = ["octo__lib-1", "octo__lib-2", "octo__lib-3", "acme__tool-7"]
    for iid in ids:
        is_resolved = iid in resolved
        ts = make_status(1, 0, 1, 0) if is_resolved else make_status(1, 1, 1, 0)
        rep = InstanceReport(instance_id=iid, model_name_or_path=model,
                             status=InstanceStatus.RESOLVED if is_resolved else InstanceStatus.UNRESOLVED,
                             patch_successfully_applied=True, resolved=is_resolved, tests_status=ts,
                             outcome=Outcome.RESOLVED if is_resolved else Outcome.PARTIALLY_RESOLVED,
                             cost=cost, repo=iid.split("__")[0] + "/x")
        write_our_instance(model_dir, rep)
    summary = {
        "total_instances": 6, "submitted_instances": 5, "completed_instances": 4,
        "resolved_instances": len(resolved), "unresolved_instances": 4 - len(resolved),
        "empty_patch_instances": 1, "error_instances": 0,
        "completed_ids": ids, "incomplete_ids": ["acme__tool-9"], "empty_patch_ids": ["acme__tool-8"],
        "submitted_ids": [*ids, "acme__tool-8"], "resolved_ids": list(resolved),
        "unresolved_ids": [i for i in ids if i not in resolved], "error_ids": [], "schema_version": 2,
    }
    (out / f"{model.replace('/', '__')}.{run_id}.json").write_text(json.dumps(summary))
    return out


def test_reference_layout_derives_statuses_and_outcomes(reference_folder: Path):
    report = report_from_paths([reference_folder])
    (s,) = report.systems
    assert s.name == "reference-logs"
    assert (s.resolved, s.total) == (1, 6)
    assert s.status_counts == {"unresolved": 4, "error": 1, "resolved": 1}
    assert s.outcome_counts["Resolved"] == 1
    assert s.outcome_counts["No-Op"] == 1
    assert s.outcome_counts["Work in Progress"] == 1
    assert s.outcome_counts["Breaking Resolved"] == 1
    assert s.outcome_counts["Regression"] == 1
    assert s.outcome_counts["not graded"] == 1
    assert s.per_repo["octo/lib"].resolved == 1 and s.per_repo["octo/lib"].total == 4
    assert s.per_repo["acme/tool"].total == 2
    assert s.ci_low == pytest.approx(0.0300, abs=1e-3) and s.ci_high == pytest.approx(0.5635, abs=1e-3)


@pytest.mark.parametrize("level", ["summary", "output", "logs", "run_id", "model"])
def test_our_layout_is_read_at_any_level(tmp_path: Path, level: str):
    out = our_output(tmp_path)
    path = {
        "summary": out / "org__agent-x.r1.json",
        "output": out,
        "logs": out / "logs" / "run_evaluation",
        "run_id": out / "logs" / "run_evaluation" / "r1",
        "model": out / "logs" / "run_evaluation" / "r1" / "org__agent-x",
    }[level]
    (run,) = load_runs([path])
    assert run.name == "org__agent-x"
    assert run.resolved_ids == {"octo__lib-1", "octo__lib-2"}
    # The summary (found beside the logs) adds the empty and the unsubmitted ids.
    assert run.instances["acme__tool-8"].status == "empty"
    assert run.instances["acme__tool-9"].status == "missing"
    report = build_report([run])
    (s,) = report.systems
    assert (s.resolved, s.total) == (2, 6)
    assert s.outcome_counts["Partially Resolved"] == 2
    assert s.mean_cost_per_task == pytest.approx(0.5)
    assert s.cost_per_resolved == pytest.approx(1.0)  # 4 * 0.5 / 2


def test_predictions_costs_and_pareto(tmp_path: Path, reference_folder: Path):
    out = our_output(tmp_path, cost=0.5)
    preds = tmp_path / "preds.jsonl"
    rows = [{"instance_id": i, "model_name_or_path": "org/agent-x", "model_patch": "x",
             "usage": {"total_cost": 0.25}} for i in ("octo__lib-1", "octo__lib-2", "octo__lib-3", "acme__tool-7")]
    preds.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    ref_preds = tmp_path / "ref.json"
    ref_preds.write_text(json.dumps({"octo__lib-1": {"model_name_or_path": "reference-logs", "cost": 2.0,
                                                    "model_patch": "y"}}))
    report = report_from_paths([out, reference_folder], prediction_files=[preds, ref_preds])
    by_name = {s.name: s for s in report.systems}
    ours = by_name["org__agent-x"]
    assert ours.mean_cost_per_task == pytest.approx(0.25)   # predictions override result.json
    assert ours.pareto is True
    ref = by_name["reference-logs"]
    assert ref.mean_cost_per_task == pytest.approx(2.0)
    assert ref.pareto is False                                # dearer and lower
    assert any("cost known for 1 of 6" in n for n in ref.notes)


def test_dataset_sets_the_denominator(tmp_path: Path, reference_folder: Path):
    tasks = [Task(instance_id=i, repo=r, base_commit="0" * 40) for i, r in
             [("octo__lib-1", "octo/lib"), ("octo__lib-2", "octo/lib"), ("new__one-1", "new/one")]]
    from issuebench.analysis.runs import load_runs as lr

    report = build_report(lr([reference_folder]), tasks=tasks)
    (s,) = report.systems
    assert (s.resolved, s.total) == (1, 3)
    assert s.status_counts["missing"] == 1
    assert any("not in the dataset" in n for n in s.notes)


def test_same_model_in_two_runs_gets_distinct_names(tmp_path: Path):
    a = our_output(tmp_path / "a", run_id="r1")
    b = our_output(tmp_path / "b", run_id="r2", resolved=("octo__lib-1",))
    runs = load_runs([a, b])
    assert sorted(r.name for r in runs) == ["org__agent-x@r1", "org__agent-x@r2"]


def test_text_renderers_carry_the_numbers(reference_folder: Path):
    report = report_from_paths([reference_folder])
    md = to_markdown(report)
    assert "| reference-logs | 1/6 | 16.7% | 3.0% to 56.4% |" in md
    csv_text = to_csv(report)
    header, row = csv_text.strip().splitlines()
    assert "outcome:No-Op" in header and row.startswith("reference-logs,1,6,0.166667")


def test_bad_input_names_the_file(tmp_path: Path):
    with pytest.raises(InputError, match="no such run"):
        load_runs([tmp_path / "nope"])
    bad = tmp_path / "logs" / "x__y-1"
    bad.mkdir(parents=True)
    (bad / "report.json").write_text("{not json")
    with pytest.raises(InputError, match=r"report.json:1: not valid JSON"):
        load_runs([tmp_path / "logs"])


def test_cli_report_json_and_error(tmp_path: Path, reference_folder: Path):
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(reference_folder), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["systems"][0]["resolved"] == 1
    res = runner.invoke(app, ["report", str(tmp_path / "missing")])
    assert res.exit_code == 2
    res = runner.invoke(app, ["report", str(reference_folder), "--format", "pdf"])
    assert res.exit_code == 2


@pytest.mark.parametrize("f2p_ok,f2p_bad,p2p_bad", [(a, b, c) for a in (0, 1, 2) for b in (0, 1) for c in (0, 1)])
def test_own_outcome_table_agrees_with_grading(f2p_ok: int, f2p_bad: int, p2p_bad: int):
    from issuebench.analysis.outcomes import outcome_from_counts, outcome_from_tests_status

    ts = make_status(f2p_ok, f2p_bad, 1, p2p_bad)
    assert outcome_from_counts(f2p_ok, f2p_bad, p2p_bad) == outcome_from_tests_status(ts)


def test_steps_come_only_from_predictions_that_state_them(tmp_path: Path):
    from issuebench.analysis.costs import read_prediction_usage

    out = our_output(tmp_path, cost=0.5)
    preds = tmp_path / "preds.jsonl"
    rows = [{"instance_id": "octo__lib-1", "model_name_or_path": "org/agent-x", "usage": {"steps": 3}},
            {"instance_id": "octo__lib-2", "model_name_or_path": "org/agent-x", "steps": True},   # not a count
            {"instance_id": "octo__lib-3", "model_name_or_path": "org/agent-x", "steps": "12"},
            {"instance_id": "acme__tool-7", "model_name_or_path": "org/agent-x", "model_patch": "gold"}]
    preds.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    usage = read_prediction_usage(preds)["org__agent-x"]
    assert usage["octo__lib-1"].steps == 3
    assert set(usage) == {"octo__lib-1"}   # no count (true, "12") or nothing stated: the row says nothing
    (s,) = report_from_paths([out], prediction_files=[preds]).systems
    assert s.steps is not None and (s.steps.known, s.steps.all.mean, s.steps.step_limit) == (1, 3.0, [])
    assert s.mean_cost_per_task == pytest.approx(0.5)                        # result.json's cost stays
    # A gold-style run (no steps anywhere): no step figures, blank cells, not 0.
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"instance_id": "octo__lib-1", "model_name_or_path": "org/agent-x",
                                "model_patch": "x"}) + "\n")
    report = report_from_paths([out], prediction_files=[gold])
    assert report.systems[0].steps is None
    assert all(r.steps is None for r in report.systems[0].instances)
    assert "Agent steps" not in to_markdown(report)
    header, row = (line.split(",") for line in to_csv(report).strip().splitlines())
    assert row[header.index("mean_steps")] == "" and row[header.index("steps_known")] == ""
