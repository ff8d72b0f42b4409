"""eval takes what a user's file and command line mean: a predictions file ending in a blank line,
predictions without model_name_or_path (graded as "unknown", said once), `-i a,b` and `-i a b`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.demo import demo_tasks

pytestmark = pytest.mark.xdist_group("demo-eval")
ISSUEBENCH = Path(sys.executable).with_name("issuebench")


def test_eval_takes_a_blank_last_line_unnamed_predictions_and_ids_by_commas_or_spaces(tmp_path):
    tasks = demo_tasks()[:3]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"instance_id": t.instance_id, "model_patch": t.patch}) + "\n"
                             for t in tasks) + "\n")  # no model_name_or_path, and a blank last line
    first, second = tasks[0].instance_id, tasks[1].instance_id
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["eval", "-d", "demo", "-p", str(preds), "-i", f"{first},{second}",
                                      "-o", str(out), "--run-id", "a"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "2/2 resolved" in result.output
    assert result.output.count("without model_name_or_path") == 1  # one line for all of them
    summary = json.loads((out / "unknown.a.json").read_text())
    assert summary["resolved_instances"] == 2

    # The real command, ids after one -i separated by spaces (the reference's --instance_ids a b).
    proc = subprocess.run([str(ISSUEBENCH), "eval", "-d", "demo", "-p", str(preds), "-i", first, second,
                           "-o", str(out), "--run-id", "b"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "2/2 resolved" in proc.stdout
    assert json.loads((out / "unknown.b.json").read_text())["submitted_instances"] == 2
