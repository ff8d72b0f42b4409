"""Bytecode kept in the pristine checkout (envs.python_bytecode): compiled from the pristine sources
after a run, hash-checked, so a patched file is never run as its pristine bytecode.

The task is the attack suites' (attack_world.py): its gold patch turns `a - b` into `a + b`, a
change of the same size made within the same second, which is the case a time-checked .pyc gets wrong.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from issuebench.harness.workspace import pristine_checkout
from issuebench.models import InstanceStatus
from tests.integration.attack_world import CORE, diff_for, evaluate

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bytecode")]

TAG = sys.implementation.cache_tag


def _pristine(world):
    task = world["task"]
    return pristine_checkout(world["repos"] / "acme__calc", task.base_commit, task.repo)


def test_the_pristine_checkout_gets_hash_checked_bytecode_of_its_own_sources(world) -> None:
    report = evaluate(world, world["task"].patch, "bytecode-gold")
    assert report.status is InstanceStatus.RESOLVED, report.reason
    pyc = _pristine(world) / "calc" / "__pycache__" / f"core.{TAG}.pyc"
    data = pyc.read_bytes()
    assert data[:4] == importlib.util.MAGIC_NUMBER
    assert int.from_bytes(data[4:8], "little") == 0b11   # hash-based and checked (PEP 552)
    # Compiled from the pristine source, not from the patched file the run compiled.
    assert data[8:16] == importlib.util.source_hash(CORE.encode())


def test_later_runs_grade_the_patched_source_not_the_pristine_bytecode(world) -> None:
    first = evaluate(world, world["task"].patch, "bytecode-first")
    assert first.status is InstanceStatus.RESOLVED, first.reason
    assert (_pristine(world) / "calc" / "__pycache__" / f"core.{TAG}.pyc").is_file()
    # The pristine bytecode is in every workspace now; the same-size fix must still be what runs.
    again = evaluate(world, world["task"].patch, "bytecode-again")
    assert again.status is InstanceStatus.RESOLVED, again.reason
    nothing = evaluate(world, diff_for(world["repo"], {"NOTES.txt": "a patch that fixes nothing\n"}), "bytecode-noop")
    assert nothing.status is InstanceStatus.UNRESOLVED, nothing.reason
