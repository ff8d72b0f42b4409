"""The dataset factory through the command line, as a user runs it: collect, validate, gold eval."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from issuebench.cli.main import app


def rows(path: Path) -> dict[str, dict]:
    return {r["instance_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def run_factory(tmp_path: Path, repos: Path, clone: str, instance_id: str) -> tuple[dict, dict, str]:
    """collect over repos/clone, validate and a gold eval: (the candidate's env, the kept task,
    gold's status)."""
    cli = CliRunner()
    candidates = tmp_path / "cand.jsonl"
    res = cli.invoke(app, ["collect", str(repos / clone), "-o", str(candidates), "-q"])
    assert res.exit_code == 0, res.output
    env = rows(candidates)[instance_id]["env"]
    tasks = tmp_path / "tasks.jsonl"
    res = cli.invoke(app, ["validate", str(candidates), "--repos", str(repos), "-o", str(tasks), "--repeats", "1",
                           "--timeout", "120"])
    assert res.exit_code == 0, res.output
    kept = rows(tasks).get(instance_id)
    assert kept is not None, rows(tmp_path / "tasks.rejected.jsonl").get(instance_id)
    res = cli.invoke(app, ["eval", "-d", str(tasks), "-p", "gold", "--repos", str(repos), "-o", str(tmp_path / "eval"),
                           "--run-id", "gold", "--workers", "1"])
    assert res.exit_code == 0, res.output
    result = tmp_path / "eval" / "logs" / "run_evaluation" / "gold" / "gold" / instance_id / "result.json"
    return env, kept, json.loads(result.read_text())["status"]
