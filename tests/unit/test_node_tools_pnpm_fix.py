"""Which pnpm replaces one that cannot fetch on its Node (pure: the registry's list is given)."""

from __future__ import annotations

from issuebench.envs.node_tools import pnpm_fetch_fix

VERSIONS = ["7.9.0", "7.33.6", "7.33.7", "8.0.0-rc.1", "8.15.9", "9.1.0"]
FAILED = " ERR_INVALID_THIS  Value of \"this\" must be of type URLSearchParams\n"


def test_the_last_release_of_the_same_major_replaces_it() -> None:
    assert pnpm_fetch_fix("pnpm", "7.9.0", FAILED, lambda: VERSIONS) == "7.33.7"


def test_a_metadata_fetch_failing_the_same_way_counts_too() -> None:
    meta = ' ERR_PNPM_META_FETCH_FAIL  GET https://registry.example/is-number: Value of "this" must be of type URLSearchParams\n'
    assert pnpm_fetch_fix("pnpm", "7.9.0", meta, lambda: VERSIONS) == "7.33.7"


def test_another_failure_or_manager_keeps_the_pin() -> None:
    assert pnpm_fetch_fix("pnpm", "7.9.0", "ERR_PNPM_FETCH_404\n", lambda: VERSIONS) is None
    assert pnpm_fetch_fix("yarn", "1.22.0", FAILED, lambda: VERSIONS) is None


def test_nothing_newer_in_the_major_keeps_the_pin() -> None:
    assert pnpm_fetch_fix("pnpm", "7.33.7", FAILED, lambda: VERSIONS) is None
