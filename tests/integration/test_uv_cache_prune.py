"""What builds leave in uv's cache and no later build reads is removed when a run ends.

A real uv cache: a source distribution built twice (its second release over the first's file, as
a build under other settings unpacks it again), so the first build's tree is left behind. The
prune takes that tree and keeps the wheel the next install takes without building.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from issuebench.envs import uv_command
from issuebench.harness import prune_uv_cache

pytestmark = [pytest.mark.slow, pytest.mark.network]   # the build backend comes from the index

PYPROJECT = ('[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
             '[project]\nname = "tinysdist"\nversion = "1.0"\n')


def _sdist(path: Path, body: str) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in (("pyproject.toml", PYPROJECT), ("tinysdist.py", body),
                           ("PKG-INFO", "Metadata-Version: 2.1\nName: tinysdist\nVersion: 1.0\n")):
            data = text.encode()
            info = tarfile.TarInfo(f"tinysdist-1.0/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _install(venv: Path, sdist: Path, env: dict[str, str]) -> str:
    proc = subprocess.run([uv_command(), "pip", "install", "--python", str(venv / "bin" / "python"), str(sdist)],
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def _trees(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("tinysdist.py") if "archive-v" not in p.parts[len(cache.parts)])


def test_a_runs_end_prunes_the_source_trees_no_build_reads_and_keeps_the_wheel(tmp_path, monkeypatch):
    cache = tmp_path / "uv-cache"
    monkeypatch.setenv("UV_CACHE_DIR", str(cache))
    monkeypatch.setenv("ISSUEBENCH_PRUNE_UV_CACHE", "1")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}   # the index's settings
    env["UV_CACHE_DIR"] = str(cache)
    venv = tmp_path / "venv"
    subprocess.run([uv_command(), "venv", str(venv)], env=env, check=True, capture_output=True)
    sdist = tmp_path / "tinysdist-1.0.tar.gz"
    _sdist(sdist, "A = 1\n")
    _install(venv, sdist, env)
    _sdist(sdist, "A = 2\n")   # another file at the same path: built again, in a new tree
    subprocess.run([uv_command(), "pip", "uninstall", "--python", str(venv / "bin" / "python"), "tinysdist"],
                   env=env, check=True, capture_output=True)
    _install(venv, sdist, env)
    before = _trees(cache)
    assert len(before) >= 2, before

    note = prune_uv_cache()

    assert note.startswith("uv's cache pruned of what no build reads"), note
    after = _trees(cache)
    assert len(after) < len(before) and all(p.read_text() == "A = 2\n" for p in after), after
    subprocess.run([uv_command(), "pip", "uninstall", "--python", str(venv / "bin" / "python"), "tinysdist"],
                   env=env, check=True, capture_output=True)
    assert "Built tinysdist" not in _install(venv, sdist, env)   # the kept wheel, not a new build
    assert prune_uv_cache() == ""   # nothing left to remove: nothing said


def test_the_prune_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("ISSUEBENCH_PRUNE_UV_CACHE", "0")
    assert prune_uv_cache() == "uv's cache left as it is (ISSUEBENCH_PRUNE_UV_CACHE=0)"
