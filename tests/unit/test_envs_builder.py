"""EnvBuilder: one build per spec hash, manifests, failure records, rebuilds, parallel callers.

Specs here install nothing from the index (no packages), so each build is a bare `uv venv` and the
tests take well under a second each; install commands go through a recording fake sandbox.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from pathlib import Path

import pytest

from issuebench.envs import EnvBuilder, EnvBuildError, exclude_newer_args, find_python, pinned_names
from issuebench.envs import cache as env_cache
from issuebench.envs.builder import effective_cutoff
from issuebench.models import EnvSpec
from issuebench.sandbox.types import RunResult


class RecordingSandbox:
    """Runs commands directly in the workspace (no isolation) and records every call."""

    name = "fake"

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[dict] = []
        self.fail_on = fail_on
        self.lock = threading.Lock()

    def run(self, argv, *, workspace, binds=(), env=None, limits=None, network=False, cwd="/tmp/testbed",
            output_path=None):
        with self.lock:
            self.calls.append({"argv": argv, "workspace": workspace, "binds": list(binds), "env": dict(env or {}),
                               "network": network, "cwd": cwd})
        if self.fail_on and self.fail_on in argv[-1]:
            return RunResult(returncode=1, output="ERROR: could not build wheels for thing", status="ok",
                             reason="", duration=0.0)
        proc = subprocess.run(argv, cwd=workspace, env={**env, "HOME": str(workspace)}, capture_output=True,
                              text=True)
        return RunResult(returncode=proc.returncode, output=proc.stdout + proc.stderr, status="ok", reason="",
                         duration=0.0)


def _python_version() -> str:
    return find_python("3.11", "nearest").minor


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "marker.txt").write_text("x")
    return ws


def _spec(**kw) -> EnvSpec:
    base = {"python": _python_version(), "seed_pip": False}
    base.update(kw)
    return EnvSpec(**base)


def test_builds_once_and_records_manifest(home, workspace):
    sandbox = RecordingSandbox()
    builder = EnvBuilder(sandbox=sandbox)
    spec = _spec(install=["echo installed > $VIRTUAL_ENV/installed.txt"], exclude_newer="2021-05-13T14:13:38Z")
    env = builder.ensure(spec, workspace)
    assert env.path.parent == home / "envs"
    assert env.env_hash == spec.env_hash()
    assert (env.path / "bin" / "python").exists()
    assert (env.path / "installed.txt").read_text().strip() == "installed"
    manifest = json.loads((env.path / "env.json").read_text())
    # The interpreter (3.11, released 2022) is newer than the task: the build's cutoff moves up to
    # its release, and the manifest keeps both dates.
    assert manifest["exclude_newer_requested"] == "2021-05-13T14:13:38Z"
    assert manifest["exclude_newer"] == effective_cutoff("2021-05-13T14:13:38Z", manifest["python_version"])
    assert manifest["python_version"].startswith(spec.python)
    assert manifest["python_fell_back"] is False
    # The install ran sandboxed, networked, venv writable, at the fixed testbed path.
    (call,) = sandbox.calls
    assert call["network"] is True and call["cwd"] == "/tmp/testbed"
    assert any(b.src == env.path and b.writable for b in call["binds"])
    assert call["env"]["UV_EXCLUDE_NEWER"] == manifest["exclude_newer"]
    # Every step's time follows its output in the log: the build's profile.
    lines = (env.path / "build.log").read_text().splitlines()
    steps = [i for i, line in enumerate(lines) if line.startswith("$ ")]
    timed = [i for i, line in enumerate(lines) if re.fullmatch(r"# took \d+\.\ds, exit 0", line)]
    assert len(steps) >= 2 and len(timed) == len(steps) and all(s < t for s, t in zip(steps, timed, strict=True))
    # Second ensure: no rebuild, same env.
    again = EnvBuilder(sandbox=sandbox).ensure(spec, workspace)
    assert again.path == env.path and len(sandbox.calls) == 1


def test_run_env_and_binds_expose_venv_and_interpreter(home, workspace):
    env = EnvBuilder(sandbox=RecordingSandbox()).ensure(_spec(env_vars={"LANG": "C.UTF-8"}), workspace)
    run_env = env.run_env()
    assert run_env["PATH"].split(":")[0] == str(env.path / "bin")
    assert run_env["VIRTUAL_ENV"] == str(env.path) and run_env["LANG"] == "C.UTF-8"
    srcs = [b.src for b in env.binds()]
    assert env.path in srcs
    assert all(not b.writable for b in env.binds())
    # The venv's python resolves into a bound prefix, so it runs where $HOME is hidden.
    real = (env.path / "bin" / "python").resolve()
    assert any(str(real).startswith(str(s)) for s in srcs)


def test_failed_build_is_recorded_and_fails_fast(home, workspace):
    sandbox = RecordingSandbox(fail_on="setup.py")
    spec = _spec(install=["python setup.py develop"])
    with pytest.raises(EnvBuildError) as first:
        EnvBuilder(sandbox=sandbox).ensure(spec, workspace)
    assert "could not build wheels" in first.value.reason
    root = home / "envs"
    assert (root / f"{spec.env_hash()}.failed.json").exists()
    assert not (root / spec.env_hash()).exists()
    # A later builder fails fast with the recorded reason and runs nothing.
    with pytest.raises(EnvBuildError) as second:
        EnvBuilder(sandbox=sandbox).ensure(spec, workspace)
    assert "could not build wheels" in second.value.reason
    assert len(sandbox.calls) == 1


def test_a_build_that_ran_out_of_disk_is_not_recorded(home, workspace):
    """A full disk (pnpm's ENOSPC) says nothing of the recipe: the next run builds again."""
    sandbox = RecordingSandbox()
    spec = _spec(install=["echo 'ERR_PNPM_ENOSPC  ENOSPC: no space left on device, copyfile' >&2; exit 1"])
    for _ in range(2):
        with pytest.raises(EnvBuildError) as failed:
            EnvBuilder(sandbox=sandbox).ensure(spec, workspace)
        assert "ENOSPC" in failed.value.reason
        assert not (home / "envs" / f"{spec.env_hash()}.failed.json").exists()
    assert len(sandbox.calls) == 2   # tried again, not failed fast


def test_a_declared_requirements_helper_without_an_answer_fails_the_build(home, workspace, monkeypatch):
    # Read as "nothing declared", the install would go on with today's releases instead of dated ones.
    (workspace / "setup.py").write_text("from setuptools import setup\nsetup(name='p', version='1.0')\n")
    monkeypatch.setattr("issuebench.envs.dated_install.SCRIPT", workspace / "gone" / "script.py")
    spec = _spec(install=["python -m pip install -e ."], exclude_newer="2021-05-13T14:13:38Z")
    with pytest.raises(EnvBuildError) as exc:
        EnvBuilder(sandbox=RecordingSandbox()).ensure(spec, workspace)
    assert "the project's declared requirements could not be read" in exc.value.reason
    assert "can't open file" in exc.value.reason


def test_rebuild_clears_failure_then_builds(home, workspace):
    spec = _spec(install=["true"])
    with pytest.raises(EnvBuildError):
        EnvBuilder(sandbox=RecordingSandbox(fail_on="true")).ensure(spec, workspace)
    sandbox = RecordingSandbox()
    env = EnvBuilder(sandbox=sandbox, rebuild=True).ensure(spec, workspace)
    assert (env.path / "env.json").exists()
    assert not (home / "envs" / f"{spec.env_hash()}.failed.json").exists()
    assert len(sandbox.calls) == 1


def test_missing_interpreter_is_not_recorded_as_failed(home, workspace):
    spec = _spec(python="2.1")
    with pytest.raises(EnvBuildError) as exc:
        EnvBuilder(sandbox=RecordingSandbox()).ensure(spec, workspace)
    assert "Python 2.1" in exc.value.reason and "uv python install 2.1" in (exc.value.hint or "")
    assert not (home / "envs" / f"{spec.env_hash()}.failed.json").exists()


def test_parallel_callers_build_once(home, workspace):
    sandbox = RecordingSandbox()
    spec = _spec(install=["sleep 0.3; echo built >> $VIRTUAL_ENV/count"])
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(EnvBuilder(sandbox=sandbox).ensure(spec, workspace)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and len({r.path for r in results}) == 1
    assert len(sandbox.calls) == 1
    assert (results[0].path / "count").read_text().count("built") == 1


def test_incomplete_env_without_manifest_is_rebuilt(home, workspace):
    spec = _spec()
    root = home / "envs"
    (root / spec.env_hash()).mkdir(parents=True)
    (root / spec.env_hash() / "junk").write_text("half a build")
    env = EnvBuilder(sandbox=RecordingSandbox()).ensure(spec, workspace)
    assert not (env.path / "junk").exists() and (env.path / "env.json").exists()


def test_pins_are_exempt_from_the_date():
    spec = EnvSpec(packages=["Jinja2==3.0.1", "'click==8.0.1'", "pytest", "numpy>=1.2", "attrs[tests]==23.1.0"],
                   exclude_newer="2021-05-13T14:13:38Z", exclude_newer_exempt=["setuptools"])
    assert pinned_names(spec.packages) == ["Jinja2", "click", "attrs"]
    args = exclude_newer_args(spec)
    assert args[:2] == ["--exclude-newer", "2021-05-13T14:13:38Z"]
    exempt = [args[i + 1].split("=")[0] for i, a in enumerate(args) if a == "--exclude-newer-package"]
    assert exempt == ["Jinja2", "click", "attrs", "setuptools"]
    assert exclude_newer_args(EnvSpec(packages=["x==1"])) == []


def test_prune_and_disk_accounting(home, workspace):
    sandbox = RecordingSandbox()
    a = EnvBuilder(sandbox=sandbox).ensure(_spec(env_vars={}, install=["true"]), workspace)
    b = EnvBuilder(sandbox=sandbox).ensure(_spec(install=["true", "true"]), workspace)
    # Two hard links to one file: counted once for real disk, twice apparently.
    blob = a.path / "blob.bin"
    blob.write_bytes(b"x" * 200_000)
    (b.path / "blob.bin").hardlink_to(blob)
    root = home / "envs"
    together = env_cache.real_disk_usage([a.path, b.path])
    separately = env_cache.real_disk_usage([a.path]) + env_cache.real_disk_usage([b.path])
    assert separately - together >= 190_000
    assert env_cache.apparent_size(b.path) >= 200_000
    records = {r.env_hash: r for r in env_cache.list_envs(root)}
    assert records[a.env_hash].state == "built"
    # The instances' layers live beside the envs and are no env, failed or otherwise.
    (root / "layers" / "abc").mkdir(parents=True)
    assert "layers" not in {r.env_hash for r in env_cache.list_envs(root)}
    assert env_cache.prune(root, failed_only=True) == [] and (root / "layers" / "abc").is_dir()
    removed = env_cache.prune(root, everything=True)
    assert set(removed) == {a.env_hash, b.env_hash} and not a.path.exists()


def test_requirement_quotes_are_dropped_only_in_pairs():
    from issuebench.envs.requirements import pinned_names
    from issuebench.envs.requirements import unquote as _unquote

    assert _unquote("'numpy==1.2'") == "numpy==1.2"
    assert _unquote("importlib_metadata; python_version<'3.8'") == "importlib_metadata; python_version<'3.8'"
    assert pinned_names(['"six==1.12.0"', "attrs>=19"]) == ["six"]


def test_python_version_match_for_cached_envs():
    from issuebench.envs.python_env import same_minor as _same_minor

    assert _same_minor("3.9", "3.9.18") and _same_minor("3", "3.11.2") and _same_minor("3.9.18", "3.9.18")
    assert not _same_minor("3.4", "3.6.15") and not _same_minor("3.10", "3.1.4")


def test_the_cutoff_moves_up_to_an_interpreter_newer_than_the_task():
    from issuebench.envs.builder import effective_cutoff

    assert effective_cutoff("2014-10-06T00:00:00Z", "3.9.18") == "2020-10-05T00:00:00Z"
    assert effective_cutoff("2021-05-13T21:32:41Z", "3.9.18") == "2021-05-13T21:32:41Z"
    assert effective_cutoff(None, "3.9.18") is None
    assert effective_cutoff("2014-10-06T00:00:00Z", "9.99.0") == "2014-10-06T00:00:00Z"  # unknown: as asked


def test_isolated_builds_are_constrained_to_the_envs_own_build_tools(tmp_path):
    from issuebench.envs.build_tools import build_constraints

    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.9" / "site-packages"
    (site / "setuptools-68.0.0.dist-info").mkdir(parents=True)
    (site / "wheel-0.41.2.dist-info").mkdir()
    path = build_constraints(venv, ["setuptools-scm==4.1.2"])
    assert path is not None
    assert path.read_text().split() == ["setuptools-scm==4.1.2", "setuptools==68.0.0", "wheel==0.41.2"]
    assert build_constraints(tmp_path / "empty") is None


def test_a_conda_environment_file_is_dated_by_the_recipes_pins(tmp_path, monkeypatch):
    from issuebench.envs import dated_packages
    from issuebench.envs.build_log import BuildLog

    asked = {}

    def newest(pins, cutoff):
        asked["pins"], asked["cutoff"] = list(pins), cutoff
        return "2023-06-28T23:59:59Z"

    monkeypatch.setattr(dated_packages, "newest_pin_date", newest)
    conda = EnvSpec(packages=["pandas==1.5.3", "dask"], requirements_files=["ci/env.yml|environment.yml"],
                    exclude_newer="2021-10-04T00:00:00Z")
    log = BuildLog(tmp_path / "build.log")
    dated = dated_packages.DatedPackages("uv", run_host=lambda *a: None)
    moved = dated.conda_era(conda, log)
    assert moved.exclude_newer == "2023-06-28T23:59:59Z" and asked["pins"] == [("pandas", "1.5.3")]
    assert any("conda environment file" in n for n in log.notes)
    # Plain requirement files keep the task's date, and only conda specs change their env hash.
    plain = conda.model_copy(update={"requirements_files": ["requirements.txt"]})
    assert dated.conda_era(plain, log).exclude_newer == "2021-10-04T00:00:00Z"
    assert conda.has_conda_files() and not plain.has_conda_files()


def test_envs_share_the_installed_files_they_hold_alike_and_a_removal_takes_only_its_own(home, workspace):
    def copying(body: str) -> str:  # what pip does: a copy of its own in the venv's lib
        return f"printf '{body}' > \"$(echo $VIRTUAL_ENV/lib/python*/site-packages)/mod.py\""

    a = EnvBuilder(sandbox=RecordingSandbox()).ensure(_spec(install=[copying("A = 1\\n")]), workspace)
    b = EnvBuilder(sandbox=RecordingSandbox()).ensure(_spec(install=[copying("A = 1\\n"), "true"]), workspace)
    c = EnvBuilder(sandbox=RecordingSandbox()).ensure(_spec(install=[copying("C = 3\\n")]), workspace)
    mod = {env.env_hash: next(env.path.glob("lib/python*/site-packages/mod.py")) for env in (a, b, c)}
    assert mod[a.env_hash].stat().st_ino == mod[b.env_hash].stat().st_ino
    assert mod[c.env_hash].stat().st_ino != mod[a.env_hash].stat().st_ino
    assert mod[c.env_hash].read_text() == "C = 3\n" and mod[b.env_hash].read_text() == "A = 1\n"
    assert "shared with other environments" in (b.path / "build.log").read_text()
    store = home / "envs" / ".files"
    assert "C = 3\n" in {p.read_text() for p in store.iterdir()}
    assert ".files" not in {r.env_hash for r in env_cache.list_envs(home / "envs")}  # the store is no env
    env_cache.remove_env(home / "envs", c.env_hash)
    assert "C = 3\n" not in {p.read_text() for p in store.iterdir()}
    assert "A = 1\n" in {p.read_text() for p in store.iterdir()}
