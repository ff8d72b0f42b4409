"""The package's own helpers run in the sandbox wherever issuebench is installed, and a helper that
gives no answer is an error with its reason, never an empty answer.

The sandbox hides $HOME, /root and the cache root, and /tmp is private: a package installed in any
of them (a clone under /tmp, a venv in $HOME) is out of the sandbox's sight unless it is bound back.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from issuebench.envs.dated_install import HelperFailed, read_declared
from issuebench.envs.instance_requirements import instance_layer
from issuebench.models import EnvSpec
from issuebench.sandbox import Bind, get_sandbox
from issuebench.sandbox.bwrap import PACKAGE_DIR
from tests.gitrepo import init_repo

PY_PREFIX = Path(sys.base_prefix).resolve()
PY = str(PY_PREFIX / "bin" / "python3")

# A setup.py whose egg_info writes what setuptools would, without needing setuptools in the
# interpreter the sandbox runs (a Python 3.12 has none).
EGG_INFO = """import os, sys
if "egg_info" in sys.argv:
    info = os.path.join(sys.argv[sys.argv.index("--egg-base") + 1], "acme.egg-info")
    os.makedirs(info)
    with open(os.path.join(info, "requires.txt"), "w") as fh:
        fh.write("six>=1.0\\n\\n[test]\\npytest\\n\\n[docs]\\nsphinx\\n")
"""
FAILING = "import sys\nsys.stderr.write('ModuleNotFoundError: numpy is needed to build\\n')\nsys.exit(1)\n"

# Run by the copy of the package: its own helper through the real sandbox, and a look at a file
# beside the package, which must stay hidden.
CHILD = """
import json, sys
from pathlib import Path
import issuebench
from issuebench.envs.dated_install import read_declared
from issuebench.sandbox import Bind, get_sandbox
ws, python, prefix, neighbour = sys.argv[1:5]
sandbox = get_sandbox()
answer = read_declared(sandbox, python, Path(ws), ["test"], binds=[Bind(Path(prefix))], env={}, network=False,
                       timeout=120)
seen = sandbox.run(["cat", neighbour], workspace=Path(ws), binds=[Bind(Path(prefix))])
# The runner-report plugin, the other package file test runs load, by its host path as well.
from issuebench.harness.runner_report import PLUGIN, PLUGIN_DIR
plugin = sandbox.run(["head", "-c", "0", str(PLUGIN_DIR / (PLUGIN + ".py"))], workspace=Path(ws))
print(json.dumps({"package": issuebench.__file__, "lines": answer.lines, "neighbour": seen.output,
                  "plugin": [plugin.returncode, plugin.output]}))
"""


@pytest.fixture
def sandbox():
    return get_sandbox()


def _workspace(root: Path, setup_py: str) -> Path:
    ws = root / "ws"
    ws.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "setup.py").write_text(setup_py)
    return ws


def test_the_declared_requirements_helper_runs_from_a_package_in_a_hidden_folder(tmp_path, monkeypatch):
    # The cache root is hidden from the sandbox wherever it is (its own tmpfs, or the private /tmp).
    home = tmp_path / "home"
    monkeypatch.setenv("ISSUEBENCH_HOME", str(home))
    site = home / "site"
    shutil.copytree(PACKAGE_DIR, site / "issuebench", ignore=shutil.ignore_patterns("__pycache__"))
    neighbour = site / "neighbour.txt"
    neighbour.write_text("NOT FOR THE SANDBOX\n")
    ws = _workspace(tmp_path, EGG_INFO)
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(ws), PY, str(PY_PREFIX), str(neighbour)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(out["package"]).is_relative_to(site)          # the copy ran, not this tree
    assert out["lines"] == ["# project: acme", "six>=1.0", "pytest"]
    assert out["plugin"] == [0, ""]
    # Only the package's own folder comes back: what lies beside it stays hidden.
    assert "NOT FOR THE SANDBOX" not in out["neighbour"]
    assert not (ws / ".issuebench-declared.txt").exists()


def test_a_setup_py_that_cannot_be_read_says_why(sandbox, tmp_path):
    ws = _workspace(tmp_path, FAILING)
    answer = read_declared(sandbox, PY, ws, [], binds=[Bind(PY_PREFIX)], env={}, network=False, timeout=120)
    assert answer.lines is None
    assert "egg_info failed (exit 1): ModuleNotFoundError: numpy is needed to build" in answer.unreadable


def test_a_helper_that_gives_no_answer_is_an_error_with_its_reason(sandbox, tmp_path, monkeypatch):
    ws = _workspace(tmp_path, EGG_INFO)
    # The interpreter is not bound into the sandbox: it cannot start there.
    missing = tmp_path / "not-bound" / "python3"
    with pytest.raises(HelperFailed, match=r"declared_requirements_script\.py ended without an answer "
                                           r"\(status ok, exit 127\)"):
        read_declared(sandbox, str(missing), ws, [], binds=[], env={}, network=False, timeout=120)
    # The script itself out of reach, as it was from a package under a hidden folder.
    monkeypatch.setattr("issuebench.envs.dated_install.SCRIPT", tmp_path / "gone" / "script.py")
    with pytest.raises(HelperFailed, match=r"exit 2\): .*can't open file"):
        read_declared(sandbox, PY, ws, [], binds=[Bind(PY_PREFIX)], env={}, network=False, timeout=120)


def test_an_unreadable_setup_py_is_a_note_on_the_instance_and_remembered(sandbox, tmp_path):
    ws = tmp_path / "ws"
    init_repo(ws, {"setup.py": FAILING})
    shims = tmp_path / "bin"   # `python` on the run's PATH, as an environment's venv gives it
    shims.mkdir()
    (shims / "python").symlink_to(PY)
    # The parts of a built environment the check reads (a real one needs a uv build from the index).
    env = SimpleNamespace(spec=EnvSpec(python="3.11", install=["python -m pip install -e ."]),
                          path=tmp_path / "env", manifest={"installed": []}, python_version="3.11.7",
                          binds=lambda: [Bind(PY_PREFIX), Bind(shims)],
                          run_env=lambda: {"PATH": f"{shims}:/usr/bin:/bin"})
    # Asked once; the second time the answer comes from what the environment remembers (no sandbox).
    for runner in (sandbox, None):
        layer, note = instance_layer(env, ws, runner, {})
        assert layer is None
        assert note is not None and "could not be read" in note
        assert "egg_info failed (exit 1): ModuleNotFoundError: numpy is needed to build" in note
