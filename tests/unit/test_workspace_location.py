"""Where workspaces go (config.workspaces_root): a memory filesystem when it has room, else the home.

The memory folder is shared ground (/dev/shm is open to every user), so a folder someone else made
or left open, or a symlink planted in its place, is never used: workspaces then go to the home.
"""

from __future__ import annotations

import os

import pytest

from issuebench import config


@pytest.fixture()
def memory_fs(tmp_path, monkeypatch):
    """A stand-in memory filesystem with room (the real one's free space varies from run to run)."""
    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setattr(config, "MEMORY_FS", shm)
    monkeypatch.setattr(config, "_memory_fs_has_room", lambda: True)
    monkeypatch.delenv("ISSUEBENCH_WORKSPACES", raising=False)
    return shm


def test_workspaces_go_to_a_folder_of_this_user_on_the_memory_filesystem(tmp_path, memory_fs):
    work = config.workspaces_root(tmp_path / "home")
    assert work == memory_fs / f"issuebench-{os.getuid()}" and work.is_dir()
    assert os.stat(work).st_mode & 0o777 == 0o700     # no other user reads a checkout under test
    assert not (tmp_path / "home" / "work").exists()


def test_a_planted_symlink_or_an_open_folder_is_not_used(tmp_path, memory_fs):
    home = tmp_path / "home"
    ours = config.workspaces_root(home)
    ours.rmdir()
    elsewhere = tmp_path / "someone-elses"
    elsewhere.mkdir()
    ours.symlink_to(elsewhere)
    assert config.workspaces_root(home) == home / "work"
    ours.unlink()
    ours.mkdir(mode=0o700)
    ours.chmod(0o777)       # readable and writable by others
    assert config.workspaces_root(home) == home / "work"


def test_without_room_or_when_told_workspaces_go_where_asked(tmp_path, monkeypatch, memory_fs):
    home = tmp_path / "home"
    monkeypatch.setattr(config, "_memory_fs_has_room", lambda: False)
    assert config.workspaces_root(home) == home / "work"
    monkeypatch.setattr(config, "_memory_fs_has_room", lambda: True)
    monkeypatch.setenv("ISSUEBENCH_WORKSPACES", "home")
    assert config.workspaces_root(home) == home / "work"
    monkeypatch.setenv("ISSUEBENCH_WORKSPACES", str(tmp_path / "mine"))
    assert config.workspaces_root(home) == tmp_path / "mine" and (tmp_path / "mine").is_dir()


def test_a_folder_that_is_no_memory_filesystem_is_not_taken_for_one(tmp_path, monkeypatch):
    # tmp_path is a folder on some filesystem, not a tmpfs mounted there: memory to spare or not,
    # its files would go to a disk, so the room check says no.
    monkeypatch.setattr(config, "MEMORY_FS", tmp_path)
    monkeypatch.setattr(config, "_available_memory", lambda: 1 << 50)
    assert config._memory_fs_has_room() is False
