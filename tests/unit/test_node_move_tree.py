"""node_modules made in a workspace on a memory filesystem is kept in an environment on disk."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from issuebench import config
from issuebench.envs.node_kind import _move_tree


def test_a_tree_moves_across_filesystems_with_its_links(tmp_path):
    if not config.MEMORY_FS.is_dir() or os.stat(config.MEMORY_FS).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no memory filesystem apart from the temporary folder's here")
    with tempfile.TemporaryDirectory(dir=config.MEMORY_FS) as shm:
        source = Path(shm) / "node_modules"
        (source / "pkg" / "bin").mkdir(parents=True)
        (source / "pkg" / "bin" / "cli.js").write_text("#!/usr/bin/env node\n")
        (source / "pkg" / "bin" / "cli.js").chmod(0o755)
        (source / ".bin").mkdir()
        (source / ".bin" / "cli").symlink_to("../pkg/bin/cli.js")
        target = tmp_path / "env" / "tree" / "node_modules"
        target.parent.mkdir(parents=True)
        _move_tree(source, target, "0" * 16)
        assert not source.exists()
        assert os.readlink(target / ".bin" / "cli") == "../pkg/bin/cli.js"
        assert (target / ".bin" / "cli").read_text() == "#!/usr/bin/env node\n"
        assert os.stat(target / "pkg" / "bin" / "cli.js").st_mode & 0o777 == 0o755


def test_on_one_filesystem_the_tree_is_renamed(tmp_path):
    source, target = tmp_path / "ws" / "node_modules", tmp_path / "env" / "node_modules"
    source.mkdir(parents=True)
    (source / "a.js").write_text("1\n")
    target.parent.mkdir()
    inode = os.stat(source / "a.js").st_ino
    _move_tree(source, target, "0" * 16)
    assert os.stat(target / "a.js").st_ino == inode and not source.exists()
