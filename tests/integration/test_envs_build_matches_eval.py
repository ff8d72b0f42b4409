"""`envs build` builds the environments eval then uses, not others.

A row's eval_script can install something of its own before the tests (`pip install 'pytest<7.2'`
in astropy's): eval builds that into the environment, so its spec, and its hash, differ from the
recipe's alone. `envs build` built the recipe's, and eval then built a second environment for the
row, cold. A real tiny repository, real builds with uv, the real CLI.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app
from tests.gitrepo import commit_files, diff_between, init_repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

DATE = "2023-06-01T00:00:00Z"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def _eval_script(base: str, test_patch: str) -> str:
    return (f"#!/bin/bash\nset -uxo pipefail\ncd /testbed\ngit checkout {base} test_calc.py\n"
            f"git apply -v - <<'EOF_114329324912'\n{test_patch}EOF_114329324912\n"
            "python -m pip install -q 'iniconfig<2.1'\n"
            ": '>>>>> Start Test Output'\npytest -rA test_calc.py\n: '>>>>> End Test Output'\n"
            f"git checkout {base} test_calc.py\n")


def test_envs_build_builds_the_environment_eval_runs_the_row_in(tmp_path, monkeypatch):
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repos" / "tiny__calc"
    base = init_repo(repo, {"calc.py": "def add(a, b):\n    return a - b\n"}, date=DATE)
    fixed = commit_files(repo, {"calc.py": "def add(a, b):\n    return a + b\n"}, "fix", date=DATE)
    tested = commit_files(repo, {"test_calc.py": TEST}, "test", date=DATE)
    test_patch = diff_between(repo, fixed, tested)
    row = {"instance_id": "tiny__calc-1", "repo": "tiny/calc", "base_commit": base, "created_at": DATE,
           "environment_setup_commit": base, "patch": diff_between(repo, base, fixed), "test_patch": test_patch,
           "FAIL_TO_PASS": ["test_calc.py::test_add"], "PASS_TO_PASS": [], "eval_script": _eval_script(base, test_patch),
           "env": {"python": "3.11", "packages": ["pytest==7.4.0", "iniconfig==2.0.0"], "exclude_newer": DATE,
                   "test_cmd": "pytest -rA", "log_parser": "parse_log_pytest"}}
    dataset = tmp_path / "tasks.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    runner = CliRunner()

    built = runner.invoke(app, ["envs", "build", str(dataset), "--repos", str(tmp_path / "repos")])
    assert built.exit_code == 0, built.output
    envs = tmp_path / "home" / "envs"
    before = sorted(p.parent.name for p in envs.glob("*/env.json"))
    assert len(before) == 1, built.output

    graded = runner.invoke(app, ["eval", "-d", str(dataset), "-p", "gold", "--repos", str(tmp_path / "repos"),
                                 "-o", str(tmp_path / "out"), "--run-id", "r"])
    assert graded.exit_code == 0, graded.output
    (result,) = (tmp_path / "out").glob("logs/run_evaluation/r/*/*/result.json")
    report = json.loads(result.read_text())
    assert report["status"] == "resolved", report["reason"]
    # eval found the environment built above, with the row's own install in it, and built no other.
    assert sorted(p.parent.name for p in envs.glob("*/env.json")) == before
    assert [report["env_hash"]] == [p.parent.name for p in envs.glob("*/env.json")]
    manifest = json.loads(next(envs.glob("*/env.json")).read_text())
    assert "iniconfig<2.1" in manifest["spec"]["packages"]
