"""The HTML report's headline: who leads, and a tie said as a tie (never "Highest rate: the first")."""

from __future__ import annotations

import json
from pathlib import Path

from issuebench.analysis.html import report_html, wrap_label
from issuebench.analysis.report import report_from_paths


def runs(root: Path, resolved: dict[str, int], total: int = 4) -> Path:
    for name, k in resolved.items():
        for n in range(total):
            d = root / "runs" / name / f"o__r-{n}"
            d.mkdir(parents=True)
            ok = n < k
            ts = {"FAIL_TO_PASS": {"success": ["t"] if ok else [], "failure": [] if ok else ["t"]},
                  "PASS_TO_PASS": {"success": [], "failure": []}}
            (d / "report.json").write_text(json.dumps({f"o__r-{n}": {"patch_is_None": False, "patch_exists": True,
                                                                     "patch_successfully_applied": True,
                                                                     "resolved": ok, "tests_status": ts}}))
    return root / "runs"


def headline(root: Path, resolved: dict[str, int]) -> str:
    html = report_html(report_from_paths([runs(root, resolved)]))
    return html.split("<header>", 1)[1].split("</header>", 1)[0]


def test_a_clear_leader_is_named(tmp_path):
    assert "Highest rate: <b>b</b>, 75.0%" in headline(tmp_path, {"a": 1, "b": 3})


def test_a_tie_at_the_top_names_everyone_there(tmp_path):
    text = headline(tmp_path, {"a": 1, "b": 3, "c": 3})
    assert "Highest rate" not in text and "Tied for the highest rate, 75.0%" in text
    assert "<b>b</b>" in text and "<b>c</b>" in text and "<b>a</b>" not in text


def test_all_tied_and_one_system(tmp_path):
    assert "All 2 systems tie at 50.0% (2/4)" in headline(tmp_path / "x", {"a": 2, "b": 2})
    one = headline(tmp_path / "y", {"a": 2})
    assert "Highest rate" not in one and "Rate: 50.0%" in one


def test_a_wrapped_label_gives_the_name_back_whole():
    for name in ("20240623_moatless_claude-3.5-sonnet", "x" * 50, "a b c", "short"):
        lines = wrap_label(name, 80, 11)
        assert "".join(lines) == name and all(len(line) <= 80 / (11 * 0.62) + 1 for line in lines)
