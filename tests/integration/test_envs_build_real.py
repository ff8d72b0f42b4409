"""A real environment for a real old release: six 1.12.0 (Dec 2018) from its sdist, built with uv
under a cutoff at its release date, installed editable in the real sandbox, its own tests run
offline in the sandbox from a second, separate workspace."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from issuebench import config
from issuebench.envs import EnvBuilder, find_python
from issuebench.envs.builder import effective_cutoff
from issuebench.models import EnvSpec

pytestmark = [pytest.mark.slow, pytest.mark.network]

RELEASE_DATE = "2018-12-10T00:00:00Z"   # six 1.12.0 was uploaded on 2018-12-09


def _sdist(tmp: Path) -> Path:
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                           "six==1.12.0", "-d", str(tmp), "-q"], capture_output=True, text=True)
    archives = list(tmp.glob("six-1.12.0.tar.gz"))
    if proc.returncode != 0 or not archives:
        pytest.skip(f"cannot download the six sdist: {proc.stderr.strip()[-200:]}")
    with tarfile.open(archives[0]) as tar:
        tar.extractall(tmp, filter="data")
    return tmp / "six-1.12.0"


def _git_repo(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    # A repository checkout has no build metadata; the sdist's would make pip think six is installed.
    shutil.rmtree(dest / "six.egg-info", ignore_errors=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run("git init -q && git add -A && git commit -qm release", shell=True, cwd=dest, check=True, env=env)
    return dest


def test_old_release_builds_under_its_date_and_its_tests_pass(tmp_path, monkeypatch):
    from issuebench.sandbox import get_sandbox

    try:
        sandbox = get_sandbox()
    except Exception as exc:  # MissingSystemPiece: no bwrap here
        pytest.skip(f"no sandbox: {exc}")
    try:
        python = find_python("3.6", "nearest")
    except Exception as exc:
        pytest.skip(f"no interpreter: {exc}")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    src = _sdist(tmp_path / "dl")
    build_ws = _git_repo(src, tmp_path / "ws-build")
    spec = EnvSpec(python=python.minor, packages=["pytest"], install=["python -m pip install -e ."],
                   exclude_newer=RELEASE_DATE, test_cmd="pytest -rA test_six.py")
    builder = EnvBuilder(sandbox=sandbox)
    env = builder.ensure(spec, build_ws)

    manifest = env.manifest
    # On Python 3.6 the cutoff is the release's; a newer stand-in moves it up to its own release.
    cutoff = effective_cutoff(RELEASE_DATE, python.version)
    assert manifest["exclude_newer_requested"] == RELEASE_DATE and manifest["exclude_newer"] == cutoff
    # Nothing newer than the cutoff: pytest resolves to a 2018 release (4.0.x) on 3.6, and to one
    # no newer than the stand-in interpreter otherwise; never today's.
    pytest_pin = next(line for line in manifest["installed"] if line.lower().startswith("pytest=="))
    expected = r"pytest==(3\.|4\.0)" if cutoff == RELEASE_DATE else r"pytest==(3\.|4\.|5\.|6\.[0-2]\.)"
    assert re.match(expected, pytest_pin), pytest_pin
    # six itself is installed editable, pointing at the fixed testbed path.
    assert not any(line.lower().startswith("six==") for line in manifest["installed"])
    links = list(env.path.glob("lib/python*/site-packages/six.egg-link"))
    assert links and links[0].read_text().splitlines()[0] == config.TESTBED_PATH

    # Reuse: a second builder returns the same env without building.
    before = (env.path / "env.json").stat().st_mtime_ns
    again = EnvBuilder(sandbox=sandbox).ensure(spec, build_ws)
    assert again.path == env.path and (env.path / "env.json").stat().st_mtime_ns == before

    # A different workspace: the env imports six from whatever is mounted at TESTBED_PATH.
    ws = _git_repo(src, tmp_path / "ws-instance")
    (ws / "six.py").write_text((ws / "six.py").read_text() + "\nISSUEBENCH_MARK = 42\n")
    probe = sandbox.run(["python", "-c", "import six; print(six.__file__, six.ISSUEBENCH_MARK)"],
                        workspace=ws, binds=env.binds(), env=env.run_env(), network=False,
                        cwd=config.TESTBED_PATH)
    assert probe.status == "ok", probe.output
    assert f"{config.TESTBED_PATH}/six.py 42" in probe.output

    result = sandbox.run(["bash", "-c", spec.test_cmd], workspace=ws, binds=env.binds(), env=env.run_env(),
                         network=False, cwd=config.TESTBED_PATH)
    assert result.status == "ok", result.output[-2000:]
    summary = result.output.strip().splitlines()[-1]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) > 150 and "failed" not in summary, result.output[-2000:]
