"""benchmarks/conformance_rerun.py: a run that gave no verdict is no agreement with "unresolved",
and the whole cross-table of official verdicts by our statuses is printed."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from issuebench.harness.artifacts import RunLayout, write_instance_result
from issuebench.models import InstanceReport, InstanceStatus
from tests.gitrepo import init_repo

ROOT = Path(__file__).parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("conformance_rerun", ROOT / "benchmarks" / "conformance_rerun.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["conformance_rerun"] = module
    spec.loader.exec_module(module)
    return module


def _official(logs: Path, iid: str, base: str, resolved: bool) -> None:
    inst = logs / iid
    inst.mkdir(parents=True)
    (inst / "eval.sh").write_text(f"git diff {base}\ngit apply -v - <<'EOF_1'\ndiff --git a/t.py b/t.py\nEOF_1\n")
    (inst / "patch.diff").write_text("")
    lists = {"FAIL_TO_PASS": {"success": ["t1"] if resolved else [], "failure": [] if resolved else ["t1"]},
             "PASS_TO_PASS": {"success": [], "failure": []}}
    (inst / "report.json").write_text(json.dumps({iid: {"resolved": resolved, "tests_status": lists}}))


def _ours(out: Path, mod, iid: str, status: InstanceStatus, resolved: bool) -> None:
    report = InstanceReport(instance_id=iid, model_name_or_path=mod.MODEL, status=status, resolved=resolved,
                            reason="no workspace: the clone lacks a file" if status is InstanceStatus.ERROR else "")
    write_instance_result(RunLayout(out, mod.RUN_ID).instance_dir(mod.MODEL, iid), report)


def test_an_error_is_no_agreement_and_the_cross_table_shows_it(tmp_path: Path, capsys) -> None:
    mod = _module()
    base = init_repo(tmp_path / "clones" / "o__a", {"a.py": "x = 1\n"})
    logs, out = tmp_path / "logs", tmp_path / "out"
    lite = tmp_path / "lite.jsonl"
    rows = []
    for iid, official_resolved in (("o__a-1", False), ("o__a-2", True), ("o__a-3", False)):
        _official(logs, iid, base, official_resolved)
        rows.append({"instance_id": iid, "repo": "o/a", "version": "1.0", "created_at": "2020-01-01T00:00:00Z",
                     "environment_setup_commit": base})
    lite.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _ours(out, mod, "o__a-1", InstanceStatus.ERROR, False)        # no verdict: not an agreement
    _ours(out, mod, "o__a-2", InstanceStatus.RESOLVED, True)      # agrees
    _ours(out, mod, "o__a-3", InstanceStatus.UNRESOLVED, False)   # agrees

    assert mod.main([str(logs), "--repos", str(tmp_path / "clones"), "--out", str(out), "--lite", str(lite),
                     "--report-only", "--json"]) == 0
    text = capsys.readouterr().out
    assert "official verdict reproduced on 2 of the 2 runs that completed" in text
    assert "1 runs gave no verdict" in text
    assert "| official verdict (rows) by our status (columns) | resolved | unresolved | error | all |" in text
    assert "| resolved | 1 | 0 | 0 | 1 |" in text
    assert "| unresolved | 0 | 1 | 1 | 2 |" in text
    assert "NO VERDICT o__a-1: ours error vs official unresolved" in text
    saved = json.loads((out / "agreement.json").read_text())
    assert (saved["agree"], saved["completed"]) == (2, 2)
    assert saved["cross_table"]["unresolved"] == {"unresolved": 1, "error": 1}


def test_agreement_counts_only_completed_runs() -> None:
    mod = _module()
    pairs = [(False, "error"), (False, "needs_network"), (False, "unresolved"), (True, "unresolved"),
             (True, None), (True, "resolved")]
    assert mod.agreement(pairs) == (2, 3)
    assert mod.cross_table(pairs)["resolved"] == {"unresolved": 1, "not run": 1, "resolved": 1}
