"""collect sets up each version group; a group whose commit reads the same to setup (requirements,
build, test commands) as one already accepted takes that recipe at its own date instead of
searching again, and says so. Real git, a real uv environment, the real sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from issuebench.collect.environments import attach_environments
from issuebench.collect.mine import CollectOptions
from issuebench.collect.pipeline import PipelineTable
from issuebench.models import Task
from issuebench.setup import remembered_spec, setup_fingerprint
from issuebench.setup.pyversions import installed_minors
from tests.gitrepo import commit_files, init_repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

PYPROJECT = ("[build-system]\nrequires = ['setuptools>=64']\nbuild-backend = 'setuptools.build_meta'\n\n"
             "[project]\nname = 'pkg'\nversion = '{version}'\nrequires-python = '>=3.11'\n"
             "dependencies = [{deps}]\n\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n")
TESTS = "".join(f"def test_{i}():\n    assert {i} + 1 > {i}\n\n" for i in range(6))


@pytest.fixture(autouse=True)
def _needs_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from issuebench.sandbox import get_sandbox

    try:
        get_sandbox()
    except Exception as exc:
        pytest.skip(f"no sandbox: {exc}")
    if "3.11" not in installed_minors():
        pytest.skip("needs Python 3.11")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))


def _task(commit: str, version: str, date: str) -> Task:
    return Task(instance_id=f"o__pkg-{version.replace('.', '')}", repo="o/pkg", base_commit=commit,
                environment_setup_commit=commit, created_at=date, version=version)


def _repo(path: Path) -> list[str]:
    """Three commits: 1.0, then 1.1 (only the version differs), then 1.2 (a new requirement)."""
    first = init_repo(path, {"pyproject.toml": PYPROJECT.format(version="1.0", deps=""), "pkg/__init__.py": "",
                             "tests/test_pkg.py": TESTS}, date="2024-03-01T00:00:00Z")
    second = commit_files(path, {"pyproject.toml": PYPROJECT.format(version="1.1", deps=""),
                                 "pkg/__init__.py": "X = 1\n"}, "1.1", date="2024-05-01T00:00:00Z")
    third = commit_files(path, {"pyproject.toml": PYPROJECT.format(version="1.2", deps="'iniconfig'")},
                         "1.2", date="2024-07-01T00:00:00Z")
    return [first, second, third]


def test_a_group_that_reads_the_same_takes_the_accepted_recipe_at_its_own_date(tmp_path: Path) -> None:
    first, second, _ = commits = _repo(tmp_path / "r")
    assert setup_fingerprint(tmp_path / "r", first) == setup_fingerprint(tmp_path / "r", second)
    assert setup_fingerprint(tmp_path / "r", first) != setup_fingerprint(tmp_path / "r", commits[2])
    tasks = [_task(first, "1.0", "2024-03-02T00:00:00Z"), _task(second, "1.1", "2024-05-02T00:00:00Z")]
    setups = attach_environments(tmp_path / "r", tasks, CollectOptions(), PipelineTable())
    searched, reused = setups
    assert searched["accepted"] and searched["iterations"] >= 1 and "reused_from" not in searched
    assert reused["accepted"] and reused["iterations"] == 0 and reused["reused_from"] == "1.0"
    assert "same requirements" in reused["reason"]
    # The recipe is the first group's, held to the second group's own date ...
    assert tasks[1].env is not None and tasks[0].env is not None
    assert tasks[1].env.exclude_newer == "2024-05-02T00:00:00Z"
    assert tasks[1].env.model_copy(update={"exclude_newer": None}) == \
        tasks[0].env.model_copy(update={"exclude_newer": None})
    # ... and remembered as the version's setup outcome, so validate's --setup-fallback takes it.
    fallback = remembered_spec(tasks[1])
    assert fallback is not None and fallback.exclude_newer == "2024-05-02T00:00:00Z"


def test_a_group_whose_requirements_changed_is_set_up_again(tmp_path: Path) -> None:
    first, _, third = _repo(tmp_path / "r")
    tasks = [_task(first, "1.0", "2024-03-02T00:00:00Z"), _task(third, "1.2", "2024-07-02T00:00:00Z")]
    setups = attach_environments(tmp_path / "r", tasks, CollectOptions(), PipelineTable())
    assert [s["accepted"] for s in setups] == [True, True]
    # Searched (its first attempt the remembered recipe of 1.0, as setup's memory does), not reused.
    assert "reused_from" not in setups[1] and setups[1]["iterations"] >= 1
