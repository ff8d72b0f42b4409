"""benchmarks/sdist_bases.py: which release is tried first as a task's approximate base, and the
fast release commit holding exactly the tree an extract + `git add` would."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("sdist_bases", ROOT / "benchmarks" / "sdist_bases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sdist_bases"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_releases_before_the_task_come_first_then_its_own_series_after_it() -> None:
    sb = _module()

    def f(v: str, when: str):
        return sb.SdistFile(Version(v), f"x-{v}.tar.gz", "", None, when)

    files = [f("2.1.7", "2019-02-11T00:00:00Z"), f("2.2a1", "2019-01-17T00:00:00Z"),
             f("2.2", "2019-04-01T00:00:00Z"), f("3.0a1", "2019-09-10T00:00:00Z"),
             f("3.0", "2019-12-02T00:00:00Z"), f("3.1", "2020-08-04T00:00:00Z")]
    # a 3.0 task made on the development branch in March 2019: 3.0 did not exist yet; the newest
    # release before it (of 3.0 or the series before) first, 3.0's own releases (which may hold
    # the fix) last; 2.1 and 3.1 are other series.
    got = [str(x.version) for x in sb.candidates(files, "3.0", "2019-03-20T03:46:18Z", 10)]
    assert got == ["2.2a1", "3.0a1", "3.0"]
    assert [str(x.version) for x in sb.candidates(files, "3.0", "2019-03-20T03:46:18Z", 2)] == ["2.2a1", "3.0a1"]


def test_fast_release_commit_has_the_tree_of_extract_and_add(tmp_path: Path) -> None:
    sb = _module()
    sdist = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        for name, data, mode in (("pkg-1.0/setup.py", b"print(1)\n", 0o644),
                                 ("pkg-1.0/bin/run", b"#!/bin/sh\n", 0o755),
                                 ('pkg-1.0/odd "name".txt', b"q\n", 0o644)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("pkg-1.0/link")
        link.type, link.linkname = tarfile.SYMTYPE, "setup.py"
        tf.addfile(link)
    release = sb.SdistFile(Version("1.0"), sdist.name, "", None, "2020-01-02T03:04:05Z")
    fast = sb.release_commit(tmp_path / "fast", release, sdist)
    tree = tmp_path / "x"
    tree.mkdir()
    with tarfile.open(sdist) as tf:
        tf.extractall(tree, filter="data")
    subprocess.run(["git", "init", "-q", str(tmp_path / "ref")], check=True)
    git = ["git", f"--git-dir={tmp_path / 'ref' / '.git'}", f"--work-tree={tree / 'pkg-1.0'}"]
    subprocess.run([*git, "add", "-A", "-f", "."], check=True, cwd=tree / "pkg-1.0")
    want = subprocess.run([*git, "write-tree"], check=True, capture_output=True, text=True).stdout.strip()
    got = subprocess.run(["git", "-C", str(tmp_path / "fast"), "rev-parse", f"{fast}^{{tree}}"], check=True,
                         capture_output=True, text=True).stdout.strip()
    assert got == want
    log = subprocess.run(["git", "-C", str(tmp_path / "fast"), "log", "-1", "--format=%ad", "--date=iso-strict",
                          "v1.0"], check=True, capture_output=True, text=True).stdout.strip()
    assert log.startswith("2020-01-02T03:04:05")
    assert sb.release_commit(tmp_path / "fast", release, sdist) == fast  # made once per release
