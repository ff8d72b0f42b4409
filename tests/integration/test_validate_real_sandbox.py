"""collect -> validate -> eval on a repository built here, with the real harness, uv env and sandbox.

One repository holds a merged fix for each rule: a clean fix, a fix that breaks an unrelated test,
a fix whose test file also holds random (flaky) tests, a change whose new test passes before it,
a test that hangs; rows are then altered to make the gold not apply and the install fail.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.collect import pipeline as P
from tests.unit.test_collect_mining import Repo

pytestmark = pytest.mark.slow

CORE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = "from calc.core import add, mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"


def _build(repos: Path) -> Repo:
    r = Repo(repos / "acme__calc")
    r.commit("init", {"calc/__init__.py": "", "calc/core.py": CORE, "tests/test_core.py": TESTS})
    r.commit("Fix add (#1)", {"calc/core.py": CORE.replace("a - b", "a + b"),
                              "tests/test_core.py": TESTS + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"})
    core = CORE.replace("a - b", "a + b")
    r.commit("Add div, faster mul (#2)", {
        "calc/core.py": core.replace("a * b", "a * b + 1") + "\n\ndef div(a, b):\n    return a / b\n",
        "tests/test_core.py": TESTS + "\n\ndef test_div():\n    from calc.core import div\n    assert div(6, 3) == 2\n"})
    r.commit("Add sub (#3)", {
        "calc/sub.py": "def sub(a, b):\n    return a - b\n",
        "tests/test_sub.py": ("import random\n\nimport pytest\n\n\ndef test_sub():\n    from calc.sub import sub\n"
                              "    assert sub(3, 1) == 2\n\n\n@pytest.mark.parametrize('i', range(16))\n"
                              "def test_coin(i):\n    assert random.random() < 0.5\n")})
    r.commit("Document add (#4)", {"calc/core.py": '"""Arithmetic."""\n' + core,
                                   "tests/test_doc.py": "def test_truth():\n    assert True\n"})
    r.commit("Hang (#5)", {"calc/hang.py": "X = 1\n",
                           "tests/test_hang.py": "import time\n\n\ndef test_hang():\n    time.sleep(120)\n"})
    return r


def test_collect_validate_eval_on_real_sandbox(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    _build(repos)
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(f'python = "{sys.version_info.major}.{sys.version_info.minor}"\n'
                      'packages = ["pytest"]\nexclude_newer_source = "none"\n'
                      'test_cmd = "python -m pytest -rA -p no:cacheprovider"\n')
    cli = CliRunner()
    candidates = tmp_path / "cand.jsonl"
    res = cli.invoke(app, ["collect", str(repos / "acme__calc"), "-o", str(candidates), "--recipe", str(recipe)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in candidates.read_text().splitlines()]
    assert [r["instance_id"] for r in rows] == [f"acme__calc-{i}" for i in range(1, 6)]

    # Two more rows made from the clean fix: a gold that no longer applies, an install that fails.
    clean = rows[0]
    broken_gold = {**clean, "instance_id": "acme__calc-1-stale",
                   "patch": clean["patch"].replace("-    return a - b", "-    return a - b - 0")}
    bad_install = {**clean, "instance_id": "acme__calc-1-noinstall",
                   "env": {**clean["env"], "install": ["exit 3"]}}
    with candidates.open("a") as fh:
        fh.write(json.dumps(broken_gold) + "\n" + json.dumps(bad_install) + "\n")

    out = tmp_path / "tasks.jsonl"
    res = cli.invoke(app, ["validate", str(candidates), "--repos", str(repos), "-o", str(out),
                           "--repeats", "3", "--timeout", "10"])
    assert res.exit_code == 0, res.output
    kept = {r["instance_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    rejected = {r["instance_id"]: r for r in map(json.loads, (tmp_path / "tasks.rejected.jsonl")
                                                 .read_text().splitlines())}
    # Task 3's coin tests are random: over 3+3 runs one of the 16 passes every time before and fails
    # every time after with probability 1/64 each (about 22% for any of them), which no number of
    # repeats can tell from a real break. Then the task is rightly rejected as breaking that test.
    coin_break = "acme__calc-3" in rejected
    if coin_break:
        assert rejected["acme__calc-3"]["reason"] == P.GOLD_BREAKS_TESTS
        assert all("test_coin" in t for t in rejected["acme__calc-3"]["broken"])
    else:
        assert "tests/test_sub.py::test_sub" in kept["acme__calc-3"]["FAIL_TO_PASS"]
    assert sorted(kept) == ["acme__calc-1"] + ([] if coin_break else ["acme__calc-3"])
    assert kept["acme__calc-1"]["FAIL_TO_PASS"] == ["tests/test_core.py::test_add"]
    assert kept["acme__calc-1"]["PASS_TO_PASS"] == ["tests/test_core.py::test_mul"]
    assert kept["acme__calc-1"]["env"]["packages"] == ["pytest"]  # the recipe travels with the row
    assert {k: v["reason"] for k, v in rejected.items() if k != "acme__calc-3"} == {
        "acme__calc-2": P.GOLD_BREAKS_TESTS, "acme__calc-4": P.NO_FAIL_TO_PASS,
        "acme__calc-5": P.TIMEOUT, "acme__calc-1-stale": P.GOLD_DOES_NOT_APPLY,
        "acme__calc-1-noinstall": P.INSTALL_FAILED}
    assert rejected["acme__calc-2"]["broken"] == ["tests/test_core.py::test_mul"]
    # What validate saw, per run, for every task that ran: each dropped coin test named with why.
    seen = {r["instance_id"]: r for r in map(json.loads, (tmp_path / "tasks.runs.jsonl").read_text().splitlines())}
    assert seen["acme__calc-1"]["after"][0]["tests/test_core.py::test_add"] == "PASSED"
    assert len(seen["acme__calc-1"]["before"]) == 3
    assert all(why.startswith(("flaky across repeats", "gold breaks it", "fails before and after")) for test, why
               in seen["acme__calc-3"]["dropped"].items() if "test_coin" in test)

    table = json.loads((tmp_path / "tasks.pipeline.json").read_text())
    # 16 coin tests over 3+3 runs: the chance that none flips is (1/16)**16.
    assert table["flaky_tests_dropped"] >= 1
    assert table["flaky_tests_dropped"] <= 16
    assert table["stages"]["candidates"] == 5 and table["stages"]["kept"] == len(kept)
    assert table["rejected"][P.GOLD_BREAKS_TESTS] == 1 + coin_break

    # The output is a dataset `eval` takes as is: gold resolves the task, an empty patch does not.
    # (Only the clean fix: a coin test that happened to agree in all runs may sit in task 3's lists.)
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"instance_id": "acme__calc-1", "model_name_or_path": "empty",
                                 "model_patch": ""}) + "\n")
    for preds, expected in (("gold", 1), (str(empty), 0)):
        res = cli.invoke(app, ["eval", "-d", str(out), "-p", preds, "--repos", str(repos),
                               "--instance-ids", "acme__calc-1",
                               "-o", str(tmp_path / "eval"), "--run-id", "v", "--workers", "1"])
        assert res.exit_code == 0, res.output
        name = "gold" if preds == "gold" else "empty"
        summary = json.loads((tmp_path / "eval" / f"{name}.v.json").read_text())
        assert summary["resolved_instances"] == expected
