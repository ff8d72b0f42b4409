"""Debian packages the selected tasks' recipes need are checked before anything runs, and said once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from issuebench.demo import demo_tasks

pytestmark = pytest.mark.xdist_group("demo-eval")

ABSENT = "issuebench-test-no-such-package"  # no Debian archive has it
TEXTKIT = "issuebench-demo/textkit"


def dataset_and_recipes(tmp_path: Path, package: str) -> tuple[Path, Path, list[str]]:
    """The demo dataset, its textkit rows without `env`: their recipe (in --recipes) names `package`."""
    rows, needing = [], []
    for task in demo_tasks():
        row = task.model_dump(mode="json")
        if task.repo == TEXTKIT:
            row.pop("env")
            needing.append(task.instance_id)
        rows.append(row)
    dataset = tmp_path / "tasks.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    (recipes / "issuebench-demo__textkit.toml").write_text(f'''repo = "{TEXTKIT}"

[defaults]
python = "3.11"
test_cmd = "python -m unittest -v"
test_directives = "paths"
log_parser = "unittest"
exclude_newer_source = "none"
env_vars = {{ PYTHONPATH = "src" }}
system_packages = ["{package}"]
''')
    return dataset, recipes, needing


def issuebench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "issuebench", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "300", **(env or {})})


def assert_said_once_up_front(proc: subprocess.CompletedProcess[str], needing: list[str]) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert f"{len(needing)} of the 12 task(s) need Debian packages that are not installed: {ABSENT} (" in errors[0]
    assert all(i in errors[0] for i in needing)
    assert f"apt-get install -y --no-install-recommends {ABSENT}" in proc.stderr
    assert "--install-system-deps" in proc.stderr and "Traceback" not in proc.stderr


def test_eval_stops_before_any_instance_naming_tasks_packages_and_the_command(tmp_path):
    dataset, recipes, needing = dataset_and_recipes(tmp_path, ABSENT)
    out = tmp_path / "out"
    proc = issuebench("eval", "-d", str(dataset), "-p", "gold", "--recipes", str(recipes), "-o", str(out))
    assert_said_once_up_front(proc, needing)
    assert not out.exists()  # nothing ran, not even the other repositories' tasks


def test_validate_stops_the_same_way(tmp_path):
    dataset, recipes, needing = dataset_and_recipes(tmp_path, ABSENT)
    out = tmp_path / "validated.jsonl"
    proc = issuebench("validate", str(dataset), "--recipes", str(recipes), "-o", str(out))
    assert_said_once_up_front(proc, needing)
    assert not out.exists()


def test_packages_that_are_installed_let_the_run_go_on(tmp_path):
    dataset, recipes, needing = dataset_and_recipes(tmp_path, "bash")  # on every Debian
    out = tmp_path / "out"
    proc = issuebench("eval", "-d", str(dataset), "-p", "gold", "--recipes", str(recipes), "-o", str(out),
                      "--run-id", "r", "--instance-ids", needing[0])
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "gold.r.json").read_text())["resolved_ids"] == [needing[0]]


def test_install_system_deps_runs_apt_get_for_exactly_the_missing_packages(tmp_path):
    """apt-get itself is stood in for (a test never installs packages): it records how it was run."""
    dataset, recipes, _needing = dataset_and_recipes(tmp_path, ABSENT)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "apt-calls"
    fake = bin_dir / "apt-get"
    fake.write_text(f'#!/bin/sh\necho "$DEBIAN_FRONTEND $*" >> {calls}\n')
    fake.chmod(0o755)
    out = tmp_path / "out"
    proc = issuebench("eval", "-d", str(dataset), "-p", "gold", "--recipes", str(recipes), "-o", str(out),
                      "--install-system-deps", env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert proc.returncode == 2, proc.stderr
    if os.geteuid() != 0:
        assert "option --install-system-deps: installing" in proc.stderr and "needs root" in proc.stderr
        assert not calls.exists()
    else:
        assert calls.read_text().splitlines() == [
            "noninteractive update -qq", f"noninteractive install -y --no-install-recommends {ABSENT}"]
        # The stand-in installed nothing: said once, naming the package that is still missing.
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "still not installed" in errors[0] and ABSENT in errors[0]
    assert not out.exists()
