"""eval/validate --setup-fallback when the recipe builds but its tests cannot run, on a repository
built here with the real harness, uv envs and sandbox.

The broken recipe installs pytest but not the project and runs `pytest` (which does not put the
root on sys.path): every test module fails at collection with "No module named 'calc'".
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.collect import pipeline as P
from issuebench.models import Task
from issuebench.setup import fallback
from issuebench.setup.fallback import fallback_spec
from tests.unit.test_collect_mining import Repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

CORE = "def add(a, b):\n    return a - b\n"
TESTS = "from calc.core import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
PY = f"{sys.version_info.major}.{sys.version_info.minor}"
BROKEN = {"python": PY, "packages": ["pytest"], "exclude_newer_source": "none",
          "test_cmd": "pytest -rA -p no:cacheprovider"}
HEALTHY = {**BROKEN, "test_cmd": "python -m pytest -rA -p no:cacheprovider"}  # -m puts the root on sys.path


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    from issuebench.sandbox import get_sandbox

    try:
        get_sandbox()
    except Exception as exc:
        pytest.skip(f"no sandbox: {exc}")


def _candidates(tmp_path: Path, name: str) -> tuple[Path, Path]:
    repos = tmp_path / "repos"
    r = Repo(repos / f"acme__{name}")
    r.commit("init", {"calc/__init__.py": "", "calc/core.py": CORE, "tests/test_core.py": TESTS})
    r.commit("Fix add (#1)", {"calc/core.py": CORE.replace("a - b", "a + b"),
                              "tests/test_core.py": TESTS + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"})
    recipe = tmp_path / "broken.toml"
    recipe.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in BROKEN.items()))
    out = tmp_path / "cand.jsonl"
    res = CliRunner().invoke(app, ["collect", str(repos / f"acme__{name}"), "-o", str(out), "--recipe", str(recipe),
                                   "--no-setup"])
    assert res.exit_code == 0, res.output
    return repos, out


def _rows(path: Path) -> dict[str, dict]:
    return {r["instance_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def _eval(tmp_path: Path, rows: list[dict], preds: str, run_id: str, repos: Path, *flags: str) -> dict:
    data = tmp_path / f"{run_id}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = CliRunner().invoke(app, ["eval", "-d", str(data), "-p", preds, "--repos", str(repos), "-o",
                                   str(tmp_path / "eval"), "--run-id", run_id, "--workers", "1", *flags])
    assert res.exit_code == 0, res.output
    model = "gold" if preds == "gold" else "breaks-imports"
    folder = tmp_path / "eval" / "logs" / "run_evaluation" / run_id / model / rows[0]["instance_id"]
    return {**json.loads((folder / "result.json").read_text()),
            "log": (folder / "run_instance.log").read_text()}


def test_validate_and_eval_fall_back_to_setup_when_the_tests_cannot_run(tmp_path: Path) -> None:
    repos, candidates = _candidates(tmp_path, "calc")
    cli = CliRunner()
    out = tmp_path / "tasks.jsonl"
    args = ["validate", str(candidates), "--repos", str(repos), "-o", str(out), "--repeats", "1", "--timeout", "60"]
    # Without the option: every run errors at collection, as before.
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert _rows(tmp_path / "tasks.rejected.jsonl")["acme__calc-1"]["reason"] == P.NO_FAIL_TO_PASS
    assert _rows(tmp_path / "tasks.runs.jsonl")["acme__calc-1"]["notes"] == []

    res = cli.invoke(app, [*args, "--setup-fallback"])
    assert res.exit_code == 0, res.output
    kept = _rows(out)["acme__calc-1"]
    assert kept["FAIL_TO_PASS"] == ["tests/test_core.py::test_add"]
    assert kept["PASS_TO_PASS"] == ["tests/test_core.py::test_zero"]
    notes = _rows(tmp_path / "tasks.runs.jsonl")["acme__calc-1"]["notes"]
    assert notes[0] == ("setup fallback: the recipe's environment cannot run the tests at the base commit "
                        "(No module named 'calc')")
    assert notes[1].startswith("setup fallback: recipe set up from ")
    # The kept row carries the environment its lists came from, and says where it came from.
    assert kept["env"]["test_cmd"] != BROKEN["test_cmd"] or kept["env"]["env_vars"]
    assert kept["env"]["notes"][-1] == notes[1]
    assert "setup fallback" in res.output
    remembered = fallback.remembered(Task.model_validate(kept))
    assert remembered["accepted"] and "No module named 'calc'" in remembered["because"]

    # A row with no recipe at all is not rejected at the door: it gets the remembered setup recipe.
    bare = tmp_path / "bare.jsonl"
    bare.write_text(json.dumps({k: v for k, v in _rows(candidates)["acme__calc-1"].items() if k != "env"}) + "\n")
    res = cli.invoke(app, ["validate", str(bare), "--repos", str(repos), "-o", str(tmp_path / "bare.out.jsonl"),
                           "--repeats", "1", "--timeout", "60", "--setup-fallback"])
    assert res.exit_code == 0, res.output
    assert _rows(tmp_path / "bare.out.jsonl")["acme__calc-1"]["env"] == kept["env"]

    # eval of the row with the broken recipe: the version's remembered setup recipe is used (no search).
    row = {**kept, "env": _rows(candidates)["acme__calc-1"]["env"]}
    without = _eval(tmp_path, [row], "gold", "plain", repos)
    assert without["status"] == "unresolved" and not any("setup fallback" in n for n in without["notes"])
    with_it = _eval(tmp_path, [row], "gold", "fallback", repos, "--setup-fallback")
    assert with_it["status"] == "resolved"
    assert with_it["notes"][0] == notes[0] and notes[1] in with_it["notes"]

    # The workers of an executor get the option with the runner's context arguments.
    from issuebench.collect.validation import harness_runner
    from issuebench.harness import build_context

    runner, _ = harness_runner(repos_dir=repos, work_dir=tmp_path / "w", setup_fallback=True)
    shipped = pickle.loads(pickle.dumps(runner))
    assert shipped._ctx is None and build_context(shipped.options).setup_fallback is fallback_spec


def test_a_patch_that_breaks_imports_gets_no_fallback(tmp_path: Path) -> None:
    repos, candidates = _candidates(tmp_path, "calc2")
    row = {**_rows(candidates)["acme__calc2-1"], "env": HEALTHY, "FAIL_TO_PASS": ["tests/test_core.py::test_add"],
           "PASS_TO_PASS": ["tests/test_core.py::test_zero"], "version": "breaks-imports"}
    core_patch = ("diff --git a/calc/core.py b/calc/core.py\n--- a/calc/core.py\n+++ b/calc/core.py\n"
                  "@@ -1,2 +1,3 @@\n+import no_such_dependency\n def add(a, b):\n-    return a - b\n"
                  "+    return a + b\n")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"instance_id": row["instance_id"], "model_name_or_path": "breaks-imports",
                                 "model_patch": core_patch}) + "\n")
    result = _eval(tmp_path, [row], str(preds), "patch", repos, "--setup-fallback")
    assert result["status"] == "unresolved"
    assert not any("setup fallback" in n for n in result["notes"])
    assert "No module named 'no_such_dependency'" in (tmp_path / "eval" / "logs" / "run_evaluation" / "patch" /
                                                      "breaks-imports" / row["instance_id"] /
                                                      "test_output.txt").read_text()
    assert "the patch's fault, no setup fallback" in result["log"]
    assert fallback.remembered(Task.model_validate(row)) is None  # setup never ran
