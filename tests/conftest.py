"""Shared test set-up: every test session gets its own issuebench home, so caches never collide."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _issuebench_home(tmp_path_factory: pytest.TempPathFactory):
    # One home per xdist worker: environments built in it are reused by that worker's tests. Always
    # a new one, whatever ISSUEBENCH_HOME the shell exported: a test never reads or leaves anything
    # in a real cache, and never sees workspaces another worker (or a run beside it) is using.
    home = tmp_path_factory.mktemp("issuebench-home")
    os.environ["ISSUEBENCH_HOME"] = str(home)
    # Tests see git as a fresh machine does: no global identity, no safe.directory exceptions.
    empty = tmp_path_factory.mktemp("gitconfig") / "config"
    empty.write_text("")
    os.environ["GIT_CONFIG_GLOBAL"] = str(empty)
    # uv's cache is the machine's, shared by every worker: a run's prune at its end would wait for
    # the other workers' installs. Its own test turns it on (test_uv_cache_prune.py).
    os.environ["ISSUEBENCH_PRUNE_UV_CACHE"] = "0"
    yield


@pytest.fixture()
def home_outside_tmp():
    """A $HOME that only the sandbox's hiding of $HOME keeps out of reach.

    Under /tmp (where tmp_path lives) or /var/tmp a secret would be hidden by the sandbox's
    private temporary folders whatever it does with $HOME, and a test of the $HOME defence would
    pass without it: the folder is made in the real home (hidden only by that same defence).
    """
    import shutil
    import tempfile
    from pathlib import Path

    base = Path.home().resolve()
    if any(base == Path(t) or Path(t) in base.parents for t in ("/tmp", "/var/tmp")):
        pytest.skip("the home folder is under a temporary folder the sandbox replaces")
    try:
        path = Path(tempfile.mkdtemp(prefix=".issuebench-test-home-", dir=base))
    except OSError:
        pytest.skip("no writable home folder for a home outside the sandbox's temporary folders")
    yield path
    shutil.rmtree(path, ignore_errors=True)
