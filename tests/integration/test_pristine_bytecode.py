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


def test_a_modules_bytecode_is_one_copy_on_disk_in_every_checkout_holding_its_source(world) -> None:
    """Two base commits with calc/core.py alike: its kept bytecode is one file, linked from both."""
    from issuebench.harness import EvalOptions, build_context
    from issuebench.harness.instance import evaluate_instance
    from issuebench.models import Prediction
    from tests.integration.attack_world import git

    repo, first = world["repo"], world["task"]
    (repo / "NOTES.txt").write_text("a later commit that leaves calc/ alone\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "notes")
    second = first.model_copy(update={"instance_id": "acme__calc-2", "base_commit": git(repo, "rev-parse", "HEAD").strip()})
    ctx = build_context(EvalOptions(output_dir=world["root"] / "out", run_id="bytecode-shared",
                                    repos_dir=world["repos"], timeout=60, use_cache=False))
    pycs = []
    for task in (first, second):
        report = evaluate_instance(task, Prediction(instance_id=task.instance_id, model_name_or_path="m",
                                                    model_patch=task.patch), ctx)
        assert report.status is InstanceStatus.RESOLVED, report.reason
        pycs.append(pristine_checkout(world["repos"] / "acme__calc", task.base_commit, task.repo)
                    / "calc" / "__pycache__" / f"core.{TAG}.pyc")
    a, b = (p.stat() for p in pycs)
    assert a.st_ino == b.st_ino and a.st_nlink >= 3   # the store's entry and both checkouts
