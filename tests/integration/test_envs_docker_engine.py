"""The Docker backend against a real engine, when one is reachable (skipped with the reason otherwise)."""

from __future__ import annotations

import pytest

from issuebench.harness import docker_backend as db


def test_engine_reachable_or_skip_with_reason():
    ok, why = db.engine_available()
    if not ok:
        pytest.skip(f"Docker backend not exercised: {why}")
    # An engine is there: leftover containers of a dead process are found and removed by label.
    assert db.cleanup_containers(pid=-1) == 0
