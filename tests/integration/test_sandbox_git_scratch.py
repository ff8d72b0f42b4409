"""An install step's git writes land in a throwaway copy of .git (real bubblewrap, real git)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from issuebench.config import TESTBED_PATH
from issuebench.sandbox import Limits, get_sandbox
from issuebench.sandbox.git_scratch import scratch_git_binds

FAST = Limits(timeout=30, memory_mb=512, max_procs=64)
# What npm-merge-driver-install does in preact's `prepare`: a merge driver in the local config and
# in .git/info/attributes, then a read of the commit.
HOOK = (f"cd {TESTBED_PATH} && git rev-parse --show-toplevel"
        " && git config --local merge.npm-merge-driver-install.driver 'node merge.js %A'"
        " && echo 'package-lock.json merge=npm-merge-driver-install' >> .git/info/attributes"
        " && git log --format=%s -1 && echo hook-ok")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "ib-home"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "package.json").write_text("{}\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=ws, check=True)
    return ws


def test_a_hook_writing_git_config_fails_on_the_read_only_git(workspace: Path) -> None:
    result = get_sandbox().run(["bash", "-c", HOOK], workspace=workspace, limits=FAST)
    assert "hook-ok" not in result.output


def test_with_the_scratch_copy_the_hook_succeeds_and_the_real_git_is_untouched(workspace: Path,
                                                                                tmp_path: Path) -> None:
    config_before = (workspace / ".git/config").read_text()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    result = get_sandbox().run(["bash", "-c", HOOK], workspace=workspace, limits=FAST,
                               binds=scratch_git_binds(workspace, scratch))
    assert "hook-ok" in result.output, result.output
    assert "base" in result.output, "the real objects are readable through the copy"
    assert (workspace / ".git/config").read_text() == config_before
    attributes = workspace / ".git/info/attributes"
    assert not attributes.exists() or "npm-merge-driver" not in attributes.read_text()
    assert "npm-merge-driver-install" in (scratch / "git/config").read_text()


def test_the_objects_stay_read_only_through_the_copy(workspace: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    before = sorted(p.name for p in (workspace / ".git/objects").iterdir())
    result = get_sandbox().run(["bash", "-c", f"cd {TESTBED_PATH} && echo x | git hash-object -w --stdin; echo end"],
                               workspace=workspace, limits=FAST, binds=scratch_git_binds(workspace, scratch))
    assert "end" in result.output
    assert sorted(p.name for p in (workspace / ".git/objects").iterdir()) == before
