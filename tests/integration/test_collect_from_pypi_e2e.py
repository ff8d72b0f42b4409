"""End to end on real code: repo from-pypi (toolz sdists) -> collect --commits -> validate -> eval."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app

pytestmark = [pytest.mark.slow, pytest.mark.network]


def test_from_pypi_pipeline_yields_tasks_gold_resolves_and_empty_does_not(tmp_path: Path) -> None:
    cli = CliRunner()
    repos = tmp_path / "repos"
    res = cli.invoke(app, ["repo", "from-pypi", "toolz", "--max-releases", "4", "-o", str(repos / "pypi__toolz")])
    if res.exit_code != 0 and "lists no versions" in res.output:
        pytest.skip("the package index is not reachable")
    assert res.exit_code == 0, res.output

    recipe = tmp_path / "recipe.toml"
    recipe.write_text(f'python = "{sys.version_info.major}.{sys.version_info.minor}"\npackages = ["pytest"]\n'
                      'test_cmd = "python -m pytest -rA -p no:cacheprovider"\n')
    candidates = tmp_path / "cand.jsonl"
    res = cli.invoke(app, ["collect", str(repos / "pypi__toolz"), "--commits", "-o", str(candidates),
                           "--recipe", str(recipe)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in candidates.read_text().splitlines()]
    assert rows and all(r["repo"] == "pypi/toolz" and r["test_patch"] and r["patch"] for r in rows)

    out = tmp_path / "tasks.jsonl"
    res = cli.invoke(app, ["validate", str(candidates), "--repos", str(repos), "-o", str(out), "--repeats", "2"])
    assert res.exit_code == 0, res.output
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert kept, (tmp_path / "tasks.rejected.jsonl").read_text()
    assert all(r["FAIL_TO_PASS"] for r in kept)

    empty = tmp_path / "empty.jsonl"
    empty.write_text("".join(json.dumps({"instance_id": r["instance_id"], "model_name_or_path": "empty",
                                         "model_patch": ""}) + "\n" for r in kept))
    for preds, name, expected in (("gold", "gold", len(kept)), (str(empty), "empty", 0)):
        res = cli.invoke(app, ["eval", "-d", str(out), "-p", preds, "--repos", str(repos),
                               "-o", str(tmp_path / "eval"), "--run-id", "e2e", "--workers", "1"])
        assert res.exit_code == 0, res.output
        summary = json.loads((tmp_path / "eval" / f"{name}.e2e.json").read_text())
        assert summary["resolved_instances"] == expected
