"""One environment per recipe, shared by every commit of a version, behaves as the reference's
per-instance install does:

- a later commit that declares a dependency the environment (installed from an earlier commit)
  lacks gets it in a layer of its own, says so, and resolves; the environment is left as it was;
- the environment is built at the task's environment_setup_commit, whichever task runs first, and
  what its pre-install steps edit in tracked files reaches each workspace as an edit of that
  workspace's own file, not as the setup commit's copy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from issuebench.datasets import gold_predictions
from issuebench.envs import find_python
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.models import EnvSpec, InstanceReport, InstanceStatus, Task
from tests.gitrepo import commit_files, diff_between, init_repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

SETUP = 'from setuptools import setup\nsetup(name="acme", version="0.1", packages=["acme"], install_requires={})\n'


def _touch(first_line: str) -> str:
    """A gold patch that adds a comment under the first line of acme/__init__.py."""
    return ("diff --git a/acme/__init__.py b/acme/__init__.py\n--- a/acme/__init__.py\n+++ b/acme/__init__.py\n"
            f"@@ -1 +1,2 @@\n {first_line}\n+# touched\n")


def _setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """Python 3.11's minor version (or a skip) and the path of the test's repository, in a fresh home."""
    try:
        python = find_python("3.11")
    except Exception as exc:
        pytest.skip(f"no Python 3.11 here: {exc}")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    return python.minor, tmp_path / "repos" / "acme__calc"


def _evaluate(tmp_path: Path, run_id: str, tasks: list[Task]) -> list[InstanceReport]:
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id=run_id, repos_dir=tmp_path / "repos",
                                    timeout=300, use_cache=False))
    return run_evaluation(tasks, gold_predictions(tasks), ctx, workers=1).reports


def test_a_commit_declaring_more_than_the_shared_env_gets_a_layer(tmp_path, monkeypatch):
    python, repo = _setup(tmp_path, monkeypatch)
    old = init_repo(repo, {"setup.py": SETUP.format("[]"), "acme/__init__.py": "def f():\n    return 1\n",
                           "tests/test_f.py": "from acme import f\n\n\ndef test_f():\n    assert f() == 1\n"})
    new = commit_files(repo, {"setup.py": SETUP.format('["six"]'),
                              "acme/__init__.py": "import six\ndef f():\n    return 1\n"}, "use six")
    spec = EnvSpec(python=python, packages=["pytest"], install=["python -m pip install -e ."],
                   test_cmd="pytest -rA tests", seed_pip=True)
    tasks = [Task(instance_id=f"acme__calc-{i}", repo="acme/calc", base_commit=sha, version="0.1", env=spec,
                  patch=_touch(first), PASS_TO_PASS=["tests/test_f.py::test_f"])
             for i, (sha, first) in enumerate([(old, "def f():"), (new, "import six")])]
    by_id = {r.instance_id: r for r in _evaluate(tmp_path, "layer", tasks)}

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


CONF_TEST = ("from acme import conf\n\n\ndef test_conf():\n    import six  # from the setup commit's requirements\n"
             "    assert six.PY3\n    assert conf.X == 2          # the pre-install edit\n"
             "    assert conf.WHERE == 'base'  # the workspace's own file\n")


def test_env_is_built_at_the_setup_commit_and_edits_apply_to_each_workspaces_file(tmp_path, monkeypatch):
    python, repo = _setup(tmp_path, monkeypatch)
    base = init_repo(repo, {"setup.py": SETUP.format("[]"), "acme/__init__.py": '"""acme."""\n',
                            "acme/conf.py": "X = 1\n\n\n\nWHERE = 'base'\n", "tests/test_conf.py": CONF_TEST})
    setup_commit = commit_files(repo, {"requirements.txt": "six\n",
                                       "acme/conf.py": "X = 1\n\n\n\nWHERE = 'setup commit'\n"}, "later")
    spec = EnvSpec(python=python, packages=["pytest"], requirements_files=["requirements.txt"],
                   pre_install=["sed -i 's/^X = 1$/X = 2/' acme/conf.py"],
                   install=["python -m pip install -e ."], test_cmd="pytest -rA tests", seed_pip=True)
    task = Task(instance_id="acme__calc-1", repo="acme/calc", base_commit=base, version="0.1", env=spec,
                environment_setup_commit=setup_commit, patch=_touch('"""acme."""'),
                PASS_TO_PASS=["tests/test_conf.py::test_conf"])
    (report,) = _evaluate(tmp_path, "setup-commit", [task])
    assert report.status is InstanceStatus.RESOLVED, report.reason


def test_a_commit_whose_declarations_the_helper_cannot_read_is_not_graded(tmp_path, monkeypatch):
    python, repo = _setup(tmp_path, monkeypatch)
    base = init_repo(repo, {"setup.py": SETUP.format('["six"]'), "acme/__init__.py": "import six\ndef f():\n    return 1\n",
                            "tests/test_f.py": "from acme import f\n\n\ndef test_f():\n    assert f() == 1\n"})
    spec = EnvSpec(python=python, packages=["pytest"], install=["python -m pip install -e ."],
                   test_cmd="pytest -rA tests", seed_pip=True)
    task = Task(instance_id="acme__calc-1", repo="acme/calc", base_commit=base, version="0.1", env=spec,
                patch=_touch("import six"), PASS_TO_PASS=["tests/test_f.py::test_f"])
    # The helper out of the sandbox's reach, as it was from a package installed under /tmp or $HOME.
    monkeypatch.setattr("issuebench.envs.dated_install.SCRIPT", tmp_path / "hidden" / "script.py")
    (report,) = _evaluate(tmp_path, "no-helper", [task])
    assert report.status is InstanceStatus.ENV_FAILED
    assert "the commit's declared requirements could not be read" in report.reason
    assert "can't open file" in report.reason


def test_a_patch_that_declares_a_new_requirement_gets_it_for_its_run(tmp_path, monkeypatch):
    """pylint-4661's fix adds appdirs to install_requires and imports it; the reference installs the
    patched project before its tests. The no-op patch, which declares nothing, gets no layer."""
    python, repo = _setup(tmp_path, monkeypatch)
    base = init_repo(repo, {"setup.py": SETUP.format("[]"), "acme/__init__.py": "def f():\n    return 0\n",
                            "tests/test_f.py": "from acme import f\n\n\ndef test_f():\n    assert f() == 1\n"})
    fixed = commit_files(repo, {"setup.py": SETUP.format('["six"]'),
                                "acme/__init__.py": "import six\n\n\ndef f():\n    return 1\n"}, "fix f with six")
    gold = diff_between(repo, base, fixed)
    spec = EnvSpec(python=python, packages=["pytest"], install=["python -m pip install -e ."],
                   test_cmd="pytest -rA tests", seed_pip=True)
    task = Task(instance_id="acme__calc-7", repo="acme/calc", base_commit=base, version="0.1", env=spec,
                patch=gold, FAIL_TO_PASS=["tests/test_f.py::test_f"])
    (report,) = _evaluate(tmp_path, "patched-requirements", [task])
    assert report.status is InstanceStatus.RESOLVED, report.reason
    note = next(n for n in report.notes if "patched project declares" in n)
    assert "six" in note and "wheels only" in note
    env_dir = tmp_path / "home" / "envs" / report.env_hash
    assert not list(env_dir.glob("lib/python*/site-packages/six*"))   # the environment stays as built
