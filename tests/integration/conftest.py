"""Fixtures the integration suites share."""

from __future__ import annotations

import pytest

from tests.integration.attack_world import make_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    """The attack suites' task (attack_world.py), built once per test module."""
    yield from make_world(tmp_path_factory)
