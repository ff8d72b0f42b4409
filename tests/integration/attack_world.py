"""The small task the attack suites share: a repository whose `add` is wrong and a test patch
adding `test_add`, built with real git; `world` is its module-scoped fixture (tests/integration/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from issuebench.harness import EvalOptions, build_context
from issuebench.harness.instance import evaluate_instance
from issuebench.models import EnvSpec, Prediction, Task

CORE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = CORE.replace("a - b", "a + b")
TESTS = "from calc.core import add, mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
NEW_TESTS = TESTS + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"
# A test runner kept in the repository, as sympy's bin/test or Django's tests/runtests.py are.
RUN_TESTS = 'exec python -m pytest -rA -p no:cacheprovider "$@"\n'


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def diff_for(repo: Path, files: dict[str, str | None], *extra: str) -> str:
    """A real `git diff` that changes `files` (None deletes), with the tree put back afterwards."""
    before = {p: (repo / p).read_text() if (repo / p).exists() else None for p in files}
    for rel, text in files.items():
        target = repo / rel
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", *extra)
    git(repo, "reset", "-q", "--hard")
    for rel, text in before.items():
        if text is None and (repo / rel).exists():
            (repo / rel).unlink()
    git(repo, "clean", "-qfd")
    return patch


def make_world(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("attacks")
    old_home = os.environ.get("ISSUEBENCH_HOME")
    os.environ["ISSUEBENCH_HOME"] = str(root / "ib-home")
    repos = root / "repos"
    repo = repos / "acme__calc"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    files = {"calc/__init__.py": "", "calc/core.py": CORE, "tests/test_core.py": TESTS, "run_tests.sh": RUN_TESTS}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    base = git(repo, "rev-parse", "HEAD").strip()
    spec = EnvSpec(python=f"{sys.version_info.major}.{sys.version_info.minor}", packages=["pytest"],
                   exclude_newer_source="none", test_cmd="python -m pytest -rA -p no:cacheprovider")
    task = Task(instance_id="acme__calc-1", repo="acme/calc", base_commit=base,
                patch=diff_for(repo, {"calc/core.py": FIXED}),
                test_patch=diff_for(repo, {"tests/test_core.py": NEW_TESTS}),
                FAIL_TO_PASS=["tests/test_core.py::test_add"], PASS_TO_PASS=["tests/test_core.py::test_mul"],
                env=spec)
    yield {"root": root, "repo": repo, "repos": repos, "task": task}
    if old_home is None:
        os.environ.pop("ISSUEBENCH_HOME", None)
    else:
        os.environ["ISSUEBENCH_HOME"] = old_home


def evaluate(world, patch: str, name: str, **limits):
    ctx = build_context(EvalOptions(output_dir=world["root"] / "out", run_id=name, repos_dir=world["repos"],
                                    timeout=limits.pop("timeout", 60), use_cache=False, **limits))
    pred = Prediction(instance_id=world["task"].instance_id, model_name_or_path=name, model_patch=patch)
    return evaluate_instance(world["task"], pred, ctx)


def code_patch(world, prelude: str, *, fixed: bool, extra: dict[str, str | None] | None = None) -> str:
    """A patch whose calc/core.py runs `prelude` at import (i.e. inside the test run)."""
    body = textwrap.dedent(prelude).strip() + "\n\n\n" + (FIXED if fixed else CORE)
    return diff_for(world["repo"], {"calc/core.py": body, **(extra or {})})


