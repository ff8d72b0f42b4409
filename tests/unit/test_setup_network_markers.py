"""Tests the suite itself marks as needing the network are left out of every run: their failures
offline say nothing of the environment (scikit-build-core's wheelhouse fixture runs `pip download`;
offline its ten errors showed only `CalledProcessError` and held setup at 94.97%)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from issuebench.setup.extract import extract
from issuebench.setup.plan import initial_plan
from issuebench.setup.source import SourceTree
from tests.gitrepo import init_repo

CONFTEST = '''import subprocess
import sys

import pytest


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory):
    # As pip fails offline: only the exit status reaches the report.
    subprocess.run([sys.executable, "-c", "raise SystemExit(1)"], check=True)


def pytest_collection_modifyitems(items):
    for item in items:
        if "wheelhouse" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.network)
'''
TESTS = "def test_plain():\n    pass\n\n\ndef test_isolated(wheelhouse):\n    pass\n"


def _repo(path: Path, files: dict[str, str]) -> tuple[SourceTree, object]:
    init_repo(path, {"pkg/__init__.py": "", "tests/conftest.py": CONFTEST, "tests/test_build.py": TESTS,
                     **files})
    tree = SourceTree.open(path)
    facts = extract(tree)
    return tree, initial_plan(facts, tree, date=tree.date(), pythons=["3.11"])


def _run(path: Path, command: str) -> str:
    """The plan's command with this interpreter's pytest, on the repository's tests."""
    command = command.replace("pytest", f"{sys.executable} -m pytest -p no:cacheprovider", 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run(f"{command} tests", shell=True, cwd=path, capture_output=True, text=True,
                          env=env, timeout=120).stdout


def test_a_declared_network_marker_leaves_its_tests_out_of_the_run(tmp_path: Path) -> None:
    pyproject = ('[project]\nname = "pkg"\nversion = "1"\n\n[tool.pytest.ini_options]\n'
                 'addopts = ["--strict-markers"]\nmarkers = [\n'
                 '    "isolated: Needs an isolated virtualenv",\n'
                 '    "network: Needs a network connection to setup or run",\n]\n')
    _, plan = _repo(tmp_path / "marked", {"pyproject.toml": pyproject})
    assert "-m 'not network'" in plan.spec.test_cmd
    assert any("network" in note for note in plan.spec.notes)
    out = _run(tmp_path / "marked", plan.spec.test_cmd)
    assert "1 passed, 1 deselected" in out and "error" not in out.lower()
    # Without the declaration nothing is left out, and the fixture's error stands.
    unmarked = pyproject.replace("network: Needs a network connection to setup or run", "slow: takes long")
    _, plain = _repo(tmp_path / "unmarked", {"pyproject.toml": unmarked.replace('"--strict-markers"', "")})
    assert "-m" not in plain.spec.test_cmd.split()
    assert "1 error" in _run(tmp_path / "unmarked", plain.spec.test_cmd)


def test_a_marker_is_known_by_its_description_and_from_an_ini_or_a_conftest(tmp_path: Path) -> None:
    setup_cfg = "[tool:pytest]\nmarkers =\n    remote: requires internet access\n    slow: takes long\n"
    _, plan = _repo(tmp_path / "cfg", {"setup.cfg": setup_cfg})
    assert "-m 'not remote'" in plan.spec.test_cmd
    conftest = CONFTEST + ('\n\ndef pytest_configure(config):\n'
                           '    config.addinivalue_line("markers", "online: talks to PyPI")\n')
    _, plan = _repo(tmp_path / "conftest", {"tests/conftest.py": conftest})
    assert "-m 'not online'" in plan.spec.test_cmd


def test_the_suites_own_marker_expression_also_leaves_them_out(tmp_path: Path) -> None:
    """A CI command's `-m "not slow"` comes after the test command's option and replaces it."""
    tox = ("[tox]\nenvlist = py311\n\n[testenv]\ndeps = pytest\ncommands = pytest -m 'not slow' tests\n\n"
           "[pytest]\nmarkers =\n    network: needs the network\n    slow: takes long\n")
    _, plan = _repo(tmp_path / "tox", {"tox.ini": tox})
    assert plan.test_args[plan.test_args.index("-m") + 1] == "(not slow) and not network"
    assert "-m 'not network'" in plan.spec.test_cmd

