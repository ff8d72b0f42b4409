"""Off a terminal (a CI log, `| tee`), tables never cut an instance id or a system name."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.cli.tables import print_table

SYSTEMS = ["20240609_moatless_gpt4o", "20240623_moatless_claude-3.5-sonnet"]
IDS = ["sympy__sympy-24152", "scikit-learn__scikit-learn-25747", "matplotlib__matplotlib-23299"]
ISSUEBENCH = Path(sys.executable).with_name("issuebench")


def write_runs(root: Path) -> Path:
    for s, name in enumerate(SYSTEMS):
        for n, iid in enumerate(IDS):
            d = root / "runs" / name / iid
            d.mkdir(parents=True)
            ok = (n + s) % 2 == 0
            ts = {"FAIL_TO_PASS": {"success": ["t"] if ok else [], "failure": [] if ok else ["t"]},
                  "PASS_TO_PASS": {"success": ["p"], "failure": []}}
            (d / "report.json").write_text(json.dumps({iid: {"patch_is_None": False, "patch_exists": True,
                                                             "patch_successfully_applied": True,
                                                             "resolved": ok, "tests_status": ts}}))
    return root / "runs"


def test_report_off_a_terminal_keeps_every_system_name_and_repository_whole(tmp_path):
    runs = write_runs(tmp_path)
    result = CliRunner().invoke(app, ["report", str(runs)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    for name in SYSTEMS:
        # each table names the systems: headline, statuses, outcomes, and the per-repository columns
        assert result.output.count(name) >= 4, (name, result.output)
    for repo in ("sympy/sympy", "scikit-learn/scikit-learn", "matplotlib/matplotlib"):
        assert repo in result.output


def test_a_piped_command_keeps_ids_whole(tmp_path):
    """The real command with its stdout a pipe, as `issuebench regrade ... | tee log` runs it."""
    rows = [{"instance_id": iid + "-with-a-long-suffix-for-the-test", "repo": "o/r", "FAIL_TO_PASS": ["t1"],
             "PASS_TO_PASS": ["t2"]} for iid in IDS]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for r in rows:
        (tmp_path / "logs" / r["instance_id"]).mkdir(parents=True)
        (tmp_path / "logs" / r["instance_id"] / "test_output.txt").write_text("PASSED t1\nFAILED t2\n")
    proc = subprocess.run([str(ISSUEBENCH), "regrade", "--logs", str(tmp_path / "logs"), "-d", str(data),
                           "--parser", "pytest", "-v"], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "80", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    for r in rows:
        assert any(r["instance_id"] in line for line in proc.stdout.splitlines()), proc.stdout


def test_prose_wraps_and_words_stay_whole_at_any_width():
    long_id = "astropy__astropy-12907-" + "x" * 70
    for terminal in (False, True):
        out = io.StringIO()
        console = Console(width=60, force_terminal=terminal, color_system=None, file=out)
        table = Table()
        table.add_column("instance")
        table.add_column("why")
        table.add_row(long_id, "a reason in words that is long enough to wrap over several lines here")
        print_table(console, table)
        lines = out.getvalue().splitlines()
        assert "…" not in out.getvalue()
        if terminal:  # the screen's edge: folded onto the next lines, every character kept
            assert max(len(line) for line in lines) <= 60
            first_column = "".join(line.split("│")[1].strip() for line in lines if line.startswith("│"))
            assert first_column == long_id
        else:  # a log has no right edge: the id on one line
            assert any(long_id in line for line in lines)
