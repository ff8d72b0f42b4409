"""repo from-pypi: one dated, tagged commit per release, from sdists built here (no network)."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from issuebench.collect import CollectOptions, collect
from issuebench.collect import pypi_history as ph

RELEASES = {
    "1.0.0": (1_600_000_000, {"tiny.py": "def add(a, b):\n    return a - b\n",
                              "tests/test_tiny.py": "def test_zero():\n    pass\n"}),
    "1.1.0": (1_610_000_000, {"tiny.py": "def add(a, b):\n    return a + b\n",
                              "tests/test_tiny.py": "from tiny import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"}),
    "1.1.1": (1_620_000_000, {"tiny.py": "def add(a, b):\n    return a + b\n",
                              "tests/test_tiny.py": "from tiny import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
                              "README": "docs only\n"}),
}


def _sdist(dest: Path, version: str) -> Path:
    mtime, files = RELEASES[version]
    path = dest / f"tiny-{version}.tar.gz"
    members = {**files, "PKG-INFO": f"Version: {version}\n", "tiny.egg-info/SOURCES.txt": "x\n"}
    with tarfile.open(path, "w:gz") as tf:
        for rel, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"tiny-{version}/{rel}")
            info.size, info.mtime = len(data), mtime - 100  # the newest member decides the date
            tf.addfile(info, io.BytesIO(data))
        stamp = tarfile.TarInfo(f"tiny-{version}/setup.cfg")
        stamp.size, stamp.mtime = 0, mtime
        tf.addfile(stamp, io.BytesIO(b""))
    return path


@pytest.fixture
def fake_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    downloads: list[str] = []
    store = tmp_path / "store"
    store.mkdir()
    monkeypatch.setattr(ph, "index_versions", lambda name: list(RELEASES))

    def download(name: str, version: str, dest: Path) -> Path:
        downloads.append(version)
        dest.mkdir(parents=True, exist_ok=True)
        return _sdist(dest, version)

    monkeypatch.setattr(ph, "download_sdist", download)
    return downloads


def test_history_has_one_dated_tagged_commit_per_release(tmp_path: Path, fake_index: list[str]) -> None:
    repo = ph.build_pypi_history("Tiny", tmp_path / "pypi__tiny", max_releases=2)
    log = subprocess.run(["git", "log", "--format=%s|%aI|%D"], cwd=repo, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert log == ["Tiny 1.1.1|2021-05-03T00:00:00+00:00|HEAD -> main, tag: v1.1.1",
                   "Tiny 1.1.0|2021-01-07T06:13:20+00:00|tag: v1.1.0"]
    tracked = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True).stdout.split()
    assert "PKG-INFO" not in tracked and not any("egg-info" in p for p in tracked)
    # A second run adds only releases it does not have.
    ph.build_pypi_history("Tiny", repo)
    assert fake_index == ["1.1.0", "1.1.1", "1.0.0"]
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo, capture_output=True, text=True)
    assert count.stdout.strip() == "3"


def test_collect_commits_on_the_release_history(tmp_path: Path, fake_index: list[str]) -> None:
    repo = ph.build_pypi_history("tiny", tmp_path / "pypi__tiny")
    result = collect(repo, CollectOptions(include_commits=True, run_setup=False))
    [task] = result.tasks  # 1.1.0 changed code and tests; 1.1.1 only a README; 1.0.0 is the root
    assert task.repo == "pypi/tiny" and task.instance_id.startswith("pypi__tiny-")
    assert task.version == "1.0" and "a + b" in task.patch and "test_add" in task.test_patch
    assert task.created_at == "2021-01-07T06:13:20Z"
    assert result.table.rejected == {"no test change": 1}


def test_extract_refuses_members_outside_the_folder(tmp_path: Path) -> None:
    bad = tmp_path / "evil-1.0.tar.gz"
    with tarfile.open(bad, "w:gz") as tf:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tf.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(tarfile.TarError):
        ph.extract_sdist(bad, tmp_path / "out")
    assert not (tmp_path / "escape.txt").exists()
