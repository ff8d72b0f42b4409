"""The two causes issue 17 found, on the real repositories at the real Lite base commits.

The clones are fetched bare clones named owner__name, found where ISSUEBENCH_REPOS_DIR points or in
`repos/` beside the checkout; without them these tests skip. Only git is run (no build, no network).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from issuebench.setup.extract import extract
from issuebench.setup.plan import initial_plan
from issuebench.setup.sample import plan_samples
from issuebench.setup.source import SourceTree


def clone(name: str, commit: str) -> SourceTree:
    env = os.environ.get("ISSUEBENCH_REPOS_DIR")
    roots = [Path(env)] if env else []
    roots.append(Path(__file__).resolve().parents[2].parent / "repos")
    found = next((r / name for r in roots if (r / name).exists()), None)
    if found is None:
        pytest.skip(f"no fetched clone {name}: set ISSUEBENCH_REPOS_DIR to a folder of owner__name clones")
    if subprocess.run(["git", "-C", str(found), "cat-file", "-e", commit], capture_output=True).returncode:
        pytest.skip(f"{name} clone lacks commit {commit[:12]}")
    return SourceTree.open(found, commit)


def test_pytest_7168_workspace_carries_its_release_tag(tmp_path: Path) -> None:
    tree = clone("pytest-dev__pytest", "4787fd64a4ca0dba5528b5651bddd254102fe9f3")
    assert tree.repo_name() == "pytest-dev/pytest"
    out = tree.export(tmp_path / "ws")
    described = subprocess.run(["git", "-C", str(out), "describe", "--tags"], capture_output=True, text=True)
    assert described.stdout.strip().startswith("5.4.")       # not 0.1.dev1: tox.ini's minversion holds
    facts = extract(tree)
    plan = initial_plan(facts, tree, date="2020-05-05T22:23:38Z", pythons=["3.8", "3.7"])
    assert not {"twisted", "pyinstaller", "regendoc"} & set(plan.spec.packages)   # tox variants only


def test_sphinx_8595_installs_its_namespace_dependencies_and_is_sampled() -> None:
    tree = clone("sphinx-doc__sphinx", "b19bce971e82f2497d67fdacdeca8db08ae0ba56")
    facts = extract(tree)
    plan = initial_plan(facts, tree, date="2020-12-27T03:07:50Z", pythons=["3.9", "3.8"])
    assert "sphinxcontrib-serializinghtml" in plan.spec.packages
    samples = plan_samples(plan, facts, tree)
    assert samples is not None and not any("/roots/" in f for f in samples[1].files)
