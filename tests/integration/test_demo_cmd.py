"""`issuebench demo` as a user runs it: twice into the same folder (as `make demo` twice does)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app

pytestmark = pytest.mark.xdist_group("demo-eval")


def test_the_demo_runs_again_into_the_same_folder(tmp_path):
    out = tmp_path / "demo-run"
    for run in (1, 2):
        res = CliRunner().invoke(app, ["demo", "-o", str(out), "--workers", "2"])
        assert res.exit_code == 0, f"run {run}: {res.output}"
        assert "12/12 verdicts match" in res.output
    # The predict step started over each time: one prediction per task, as eval requires.
    for mode in ("agent", "infer"):
        rows = [json.loads(line) for line in (out / "predict" / mode / "preds.jsonl").read_text().splitlines()]
        ids = [r["instance_id"] for r in rows]
        assert len(ids) == len(set(ids)) == 3, (mode, ids)
