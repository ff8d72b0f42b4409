"""Pristine checkouts share their alike files on disk; a workspace's files stay its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from issuebench.content_store import STORE
from issuebench.harness import workspace
from issuebench.harness.workspace import create_workspace, pristine_checkout
from tests.gitrepo import commit_files, init_repo

FILES = {"pkg/__init__.py": "", "pkg/tests/__init__.py": "", "pkg/core.py": "A = 1\n" * 500,
         "pkg/other.py": "B = 2\n", "run.sh": "#!/bin/sh\necho hi\n"}


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))


def two_commits(tmp_path: Path) -> tuple[Path, str, str]:
    src = tmp_path / "src"
    first = init_repo(src, FILES)
    (src / "run.sh").chmod(0o755)
    commit_files(src, {"run.sh": FILES["run.sh"]}, "executable")
    second = commit_files(src, {"pkg/other.py": "B = 3\n"}, "change one file")
    return src, first, second


def inode(path: Path) -> int:
    return path.stat().st_ino


def test_two_checkouts_hold_one_copy_of_each_file_they_share(tmp_path: Path) -> None:
    src, first, second = two_commits(tmp_path)
    create_workspace(src, first, tmp_path / "work")
    create_workspace(src, second, tmp_path / "work")
    a, b = pristine_checkout(src, first), pristine_checkout(src, second)
    assert inode(a / "pkg/core.py") == inode(b / "pkg/core.py")
    assert inode(a / "pkg/other.py") != inode(b / "pkg/other.py")
    assert (a / "pkg/other.py").read_text() == "B = 2\n" and (b / "pkg/other.py").read_text() == "B = 3\n"
    # the mode is part of the key: an executable never shares with a plain file of its bytes
    assert (b / "run.sh").stat().st_mode & 0o111


def test_a_workspace_file_changed_in_place_changes_nothing_else(tmp_path: Path) -> None:
    src, first, second = two_commits(tmp_path)
    ws = create_workspace(src, first, tmp_path / "work")
    other = create_workspace(src, second, tmp_path / "work")
    with (ws / "pkg/__init__.py").open("w") as handle:  # written in place, not replaced
        handle.write("changed = True\n")
    with (ws / "pkg/core.py").open("a") as handle:
        handle.write("C = 3\n")
    assert (ws / "pkg/tests/__init__.py").read_text() == ""  # alike in the checkout, not in the workspace
    for checkout in (pristine_checkout(src, first), pristine_checkout(src, second), other):
        assert (checkout / "pkg/__init__.py").read_text() == ""
        assert (checkout / "pkg/core.py").read_text() == FILES["pkg/core.py"]


def test_an_evicted_checkout_takes_the_files_only_it_held_with_it(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workspace, "MAX_TEMPLATES", 1)
    src, first, second = two_commits(tmp_path)
    create_workspace(src, first, tmp_path / "work")
    store = pristine_checkout(src, first).parent / STORE
    contents = {p.read_bytes() for p in store.iterdir()}
    assert b"B = 2\n" in contents
    create_workspace(src, second, tmp_path / "work")  # evicts the first checkout
    assert not pristine_checkout(src, first).exists()
    contents = {p.read_bytes() for p in store.iterdir()}
    assert b"B = 2\n" not in contents and b"B = 3\n" in contents
    assert FILES["pkg/core.py"].encode() in contents


def test_a_pass_over_a_hundred_tasks_makes_each_checkout_once(tmp_path: Path) -> None:
    """Under a cap smaller than the tasks of a pass, every step would make every checkout again."""
    src = tmp_path / "src"
    commits = [init_repo(src, {"a.py": "0\n"})]
    commits += [commit_files(src, {"a.py": f"{i}\n"}, f"c{i}") for i in range(1, 100)]
    for commit in commits:
        create_workspace(src, commit, tmp_path / "work")
    first = pristine_checkout(src, commits[0])
    made = first.stat().st_ino
    create_workspace(src, commits[0], tmp_path / "work")
    assert first.stat().st_ino == made
