"""One environment shared by two commits of a project: the later commit declares a dependency the
environment (installed from the earlier commit) lacks. The instance gets it in a layer of its own,
says so, and resolves; the environment itself is left as it was."""

from __future__ import annotations

import pytest

from issuebench.datasets import gold_predictions
from issuebench.envs import find_python
from issuebench.harness import build_context, run_evaluation
from issuebench.models import EnvSpec, InstanceStatus, Task
from tests.gitrepo import commit_files, init_repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

SETUP = 'from setuptools import setup\nsetup(name="acme", version="0.1", packages=["acme"], install_requires={})\n'
TEST = "from acme import f\n\n\ndef test_f():\n    assert f() == 1\n"
TOUCH = ("diff --git a/acme/__init__.py b/acme/__init__.py\n--- a/acme/__init__.py\n+++ b/acme/__init__.py\n"
         "@@ -1 +1,2 @@\n {first}\n+# touched\n")


def test_a_commit_declaring_more_than_the_shared_env_gets_a_layer(tmp_path, monkeypatch):
    try:
        python = find_python("3.11")
    except Exception as exc:
        pytest.skip(f"no Python 3.11 here: {exc}")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repos" / "acme__calc"
    old = init_repo(repo, {"setup.py": SETUP.format("[]"), "acme/__init__.py": "def f():\n    return 1\n",
                           "tests/test_f.py": TEST})
    new = commit_files(repo, {"setup.py": SETUP.format('["six"]'),
                              "acme/__init__.py": "import six\ndef f():\n    return 1\n"}, "use six")
    spec = EnvSpec(python=python.minor, packages=["pytest"], install=["python -m pip install -e ."],
                   test_cmd="pytest -rA tests", seed_pip=True)
    tasks = [Task(instance_id=f"acme__calc-{i}", repo="acme/calc", base_commit=sha, version="0.1", env=spec,
                  patch=TOUCH.format(first=first), PASS_TO_PASS=["tests/test_f.py::test_f"])
             for i, (sha, first) in enumerate([(old, "def f():"), (new, "import six")])]
    ctx = build_context(output_dir=tmp_path / "out", run_id="layer", repos_dir=tmp_path / "repos", timeout=300,
                        use_cache=False)
    reports = run_evaluation(tasks, gold_predictions(tasks), ctx, workers=1).reports
    by_id = {r.instance_id: r for r in reports}

    first, second = by_id["acme__calc-0"], by_id["acme__calc-1"]
    assert first.status is InstanceStatus.RESOLVED, first.reason
    assert not any("layer" in n for n in first.notes)
    assert second.status is InstanceStatus.RESOLVED, second.reason
    assert second.env_hash == first.env_hash   # one environment for both commits
    note = next(n for n in second.notes if "layer" in n)
    assert "six" in note
    # The shared environment did not get the package: only the layer has it.
    env_dir = tmp_path / "home" / "envs" / first.env_hash
    assert not list(env_dir.glob("lib/python*/site-packages/six*"))
    assert list((tmp_path / "home" / "envs" / "layers").glob("*/six*"))
