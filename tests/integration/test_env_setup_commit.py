"""An environment is built at the task's environment_setup_commit (as the reference builds its
images), whichever task of the version runs first; what its pre-install steps edit in tracked files
reaches each workspace as an edit of that workspace's own file, not as the setup commit's copy."""

from __future__ import annotations

import pytest

from issuebench.datasets import gold_predictions
from issuebench.envs import find_python
from issuebench.harness import build_context, run_evaluation
from issuebench.models import EnvSpec, InstanceStatus, Task
from tests.gitrepo import commit_files, init_repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

SETUP = 'from setuptools import setup\nsetup(name="acme", version="0.1", packages=["acme"])\n'
TEST = ("from acme import conf\n\n\ndef test_conf():\n    import six  # from the setup commit's requirements\n"
        "    assert six.PY3\n    assert conf.X == 2          # the pre-install edit\n"
        "    assert conf.WHERE == 'base'  # the workspace's own file\n")
TOUCH = ("diff --git a/acme/__init__.py b/acme/__init__.py\n--- a/acme/__init__.py\n+++ b/acme/__init__.py\n"
         "@@ -1 +1,2 @@\n \"\"\"acme.\"\"\"\n+# touched\n")


def test_env_is_built_at_the_setup_commit_and_edits_apply_to_each_workspaces_file(tmp_path, monkeypatch):
    try:
        python = find_python("3.11")
    except Exception as exc:
        pytest.skip(f"no Python 3.11 here: {exc}")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repos" / "acme__calc"
    base = init_repo(repo, {"setup.py": SETUP, "acme/__init__.py": '"""acme."""\n',
                            "acme/conf.py": "X = 1\n\n\n\nWHERE = 'base'\n", "tests/test_conf.py": TEST})
    setup_commit = commit_files(repo, {"requirements.txt": "six\n",
                                       "acme/conf.py": "X = 1\n\n\n\nWHERE = 'setup commit'\n"}, "later")
    spec = EnvSpec(python=python.minor, packages=["pytest"], requirements_files=["requirements.txt"],
                   pre_install=["sed -i 's/^X = 1$/X = 2/' acme/conf.py"],
                   install=["python -m pip install -e ."], test_cmd="pytest -rA tests", seed_pip=True)
    task = Task(instance_id="acme__calc-1", repo="acme/calc", base_commit=base, version="0.1", env=spec,
                environment_setup_commit=setup_commit, patch=TOUCH, PASS_TO_PASS=["tests/test_conf.py::test_conf"])
    ctx = build_context(output_dir=tmp_path / "out", run_id="setup-commit", repos_dir=tmp_path / "repos",
                        timeout=300, use_cache=False)
    (report,) = run_evaluation([task], gold_predictions([task]), ctx, workers=1).reports
    assert report.status is InstanceStatus.RESOLVED, report.reason
