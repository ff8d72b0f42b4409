"""`compare` on two run folders this test writes (ours and the reference's layout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.analysis.compare import compare_runs, comparison_text
from issuebench.analysis.runs import load_runs
from issuebench.cli.main import app
from issuebench.models import InstanceReport, InstanceStatus


def write_reference(folder: Path, outcomes: dict[str, bool]) -> Path:
    for iid, resolved in outcomes.items():
        d = folder / iid
        d.mkdir(parents=True)
        body = {"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
                "resolved": resolved,
                "tests_status": {"FAIL_TO_PASS": {"success": ["t"] if resolved else [], "failure": [] if resolved else ["t"]},
                                 "PASS_TO_PASS": {"success": [], "failure": []},
                                 "FAIL_TO_FAIL": {"success": [], "failure": []},
                                 "PASS_TO_FAIL": {"success": [], "failure": []}}}
        (d / "report.json").write_text(json.dumps({iid: body}))
    return folder


def write_ours(model_dir: Path, outcomes: dict[str, bool]) -> Path:
    for iid, resolved in outcomes.items():
        d = model_dir / iid
        d.mkdir(parents=True)
        rep = InstanceReport(instance_id=iid, model_name_or_path="m", resolved=resolved,
                             status=InstanceStatus.RESOLVED if resolved else InstanceStatus.UNRESOLVED,
                             patch_successfully_applied=True)
        (d / "result.json").write_text(rep.model_dump_json())
    return model_dir


IDS = [f"o__r-{i}" for i in range(20)]


@pytest.fixture
def two_systems(tmp_path: Path) -> tuple[Path, Path]:
    # A resolves 0..11 (12), B resolves 0..3 and 12..13 (6): A-only 8, B-only 2, both 4, neither 6.
    a = {i: n < 12 for n, i in enumerate(IDS)}
    b = {i: n < 4 or n in (12, 13) for n, i in enumerate(IDS)}
    b["o__r-99"] = True  # not shared: ignored by the paired comparison
    ra = write_ours(tmp_path / "out" / "logs" / "run_evaluation" / "r1" / "model-a", a)
    rb = write_reference(tmp_path / "ref", b)
    return ra, rb


def test_paired_numbers(two_systems):
    a, b = (load_runs([p])[0] for p in two_systems)
    c = compare_runs(a, b, n_boot=2000, seed=3)
    assert c.shared == 20 and c.only_in_b == 1 and c.only_in_a == 0
    assert (c.resolved_a, c.resolved_b, c.both, c.neither) == (12, 6, 4, 6)
    assert c.diff == pytest.approx(0.3)
    assert c.b_only_ids == ["o__r-12", "o__r-13"]
    assert len(c.a_only_ids) == 8
    # 2 * P(X <= 2), X ~ Binomial(10, 1/2) = 2 * 56 / 1024
    assert c.mcnemar_p == pytest.approx(112 / 1024)
    assert c.ci_low < 0.3 < c.ci_high
    assert c == compare_runs(a, b, n_boot=2000, seed=3)  # seeded
    # p10 = 0.4, p01 = 0.1 -> Connor's formula
    assert c.tasks_needed == 42  # (1.96*sqrt(.5) + 0.8416*sqrt(.5 - .09))^2 / .09 = 41.2
    assert "cannot tell the two apart" in c.verdict
    text = comparison_text(c)
    assert "only B resolved: o__r-12, o__r-13" in text


def test_identical_systems_never_separate(tmp_path):
    same = {i: n % 2 == 0 for n, i in enumerate(IDS)}
    a = load_runs([write_reference(tmp_path / "a", same)])[0]
    b = load_runs([write_reference(tmp_path / "b", same)])[0]
    c = compare_runs(a, b, n_boot=500)
    assert c.mcnemar_p == 1.0 and c.tasks_needed is None and (c.ci_low, c.ci_high) == (0.0, 0.0)


def test_clear_difference_is_called(tmp_path):
    a = load_runs([write_reference(tmp_path / "a", {i: True for i in IDS})])[0]
    b = load_runs([write_reference(tmp_path / "b", {i: n < 5 for n, i in enumerate(IDS)})])[0]
    c = compare_runs(a, b, n_boot=1000)
    assert c.mcnemar_p == pytest.approx(2 / 2**15)
    assert c.verdict.startswith("a resolves more")


def test_cli_compare(two_systems):
    res = CliRunner().invoke(app, ["compare", str(two_systems[0]), str(two_systems[1]), "--format", "json",
                                   "--bootstrap", "500"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["shared"] == 20 and data["b_only_ids"] == ["o__r-12", "o__r-13"]


def test_cli_compare_refuses_a_folder_of_many_systems(tmp_path, two_systems):
    write_ours(tmp_path / "out" / "logs" / "run_evaluation" / "r1" / "model-b", {"o__r-1": True})
    res = CliRunner().invoke(app, ["compare", str(tmp_path / "out"), str(two_systems[1])])
    assert res.exit_code == 2
    assert "holds 2 systems" in " ".join(res.output.split())
