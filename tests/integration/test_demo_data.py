"""The embedded demo dataset: bundles unpack, every task reproduces its lists, every prediction its verdict.

Plain subprocesses, no sandbox and no environment build: the demo projects need nothing but the
standard library, so the running interpreter can run their tests directly.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from issuebench import demo
from issuebench.errors import IssuebenchError
from issuebench.grading import grade
from issuebench.harness import commands as harness_commands
from issuebench.models import InstanceStatus, Outcome, PatchStatus, Task, TestStatus
from issuebench.parsers import get_parser
from issuebench.patch import apply_patch, files_touched, is_test_path

ROOT = Path(__file__).resolve().parents[2]
TASKS = demo.demo_tasks()
MIXED = {p.instance_id: p for p in demo.demo_predictions("mixed")}
DETAILS = demo.expected_mixed_details()
parse_unittest = get_parser("unittest")


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def repos_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ISSUEBENCH_HOME", str(tmp_path_factory.mktemp("home")))
        return demo.demo_repos_dir()


def checkout(repos_dir: Path, task: Task, dest: Path) -> Path:
    source = repos_dir / task.repo.replace("/", "__")
    git(dest.parent, "clone", "--quiet", "--shared", "--no-checkout", str(source), str(dest))
    git(dest, "checkout", "--quiet", "--detach", task.base_commit)
    return dest


def run_task_tests(tree: Path, task: Task) -> dict[str, TestStatus]:
    """The harness's test command for the task, run with this interpreter, parsed as the harness does."""
    assert task.env is not None
    argv = shlex.split(harness_commands.test_command(task.env, task.test_patch))
    assert argv[:3] == ["python", "-m", "unittest"]
    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", **task.env.env_vars}
    proc = subprocess.run([sys.executable, *argv[1:]], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=120)
    return parse_unittest(proc.stdout + proc.stderr)


def git_apply(tree: Path, patch: str) -> None:
    proc = subprocess.run(["git", "apply", "-"], cwd=tree, input=patch, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_dataset_shape() -> None:
    assert len(TASKS) >= 12
    assert len({t.instance_id for t in TASKS}) == len(TASKS)
    assert {t.repo for t in TASKS} == {f"issuebench-demo/{b.stem}" for b in demo.demo_bundles()}
    for task in TASKS:
        assert task.instance_id.startswith(task.repo.replace("/", "__") + "-")
        assert task.FAIL_TO_PASS and task.PASS_TO_PASS and task.problem_statement and task.version
        assert task.created_at and task.environment_setup_commit
        assert task.env is not None
        assert (task.env.log_parser, task.env.test_directives, task.env.packages, task.env.install) == \
            ("unittest", "paths", [], [])
    # One environment for every task: it installs nothing and has no date cutoff.
    assert len({t.env.env_hash() for t in TASKS if t.env}) == 1


def test_bundles_are_small() -> None:
    for bundle in demo.demo_bundles():
        assert bundle.stat().st_size < 20_000, bundle.name


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.instance_id)
def test_patches_split_code_from_tests(task: Task) -> None:
    assert files_touched(task.patch) and not any(is_test_path(p) for p in files_touched(task.patch))
    assert files_touched(task.test_patch) and all(is_test_path(p) for p in files_touched(task.test_patch))


def test_every_commit_is_in_the_unpacked_clones(repos_dir: Path) -> None:
    for task in TASKS:
        clone = repos_dir / task.repo.replace("/", "__")
        assert (clone / ".git").is_dir()
        for sha in (task.base_commit, task.environment_setup_commit):
            assert sha is not None
            git(clone, "cat-file", "-e", f"{sha}^{{commit}}")
        assert git(clone, "remote").strip() == "", "the clone must not point back into the package"


def test_no_fix_is_anywhere_in_the_history(repos_dir: Path) -> None:
    for task in TASKS:
        clone = repos_dir / task.repo.replace("/", "__")
        added = [line[1:].strip() for line in task.patch.splitlines()
                 if line.startswith("+") and not line.startswith("+++")]
        fix_line = max(added, key=len)
        # Pickaxe: commits (on any ref) where the number of occurrences of the line changed.
        assert git(clone, "log", "--all", "--format=%H", "-S", fix_line).strip() == "", (task.instance_id, fix_line)


def test_unpacking_is_idempotent_and_replaces_stale_clones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path))
    root = demo.demo_repos_dir()
    clone = root / "issuebench-demo__textkit"
    marker = clone / "marker-left-by-test"
    marker.write_text("x")
    assert demo.demo_repos_dir() == root
    assert marker.exists(), "a second call must reuse the clone"
    (clone / ".git" / demo.STAMP_FILE).write_text("stale\n")
    demo.demo_repos_dir()
    assert not marker.exists(), "a clone from other demo data must be replaced"
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == \
        sorted(f"issuebench-demo__{b.stem}" for b in demo.demo_bundles())
    assert not [p for p in root.iterdir() if p.is_dir() and p.name.startswith(".")], "temporary folders left"


def test_parallel_processes_unpack_safely(tmp_path: Path) -> None:
    env = {**os.environ, "ISSUEBENCH_HOME": str(tmp_path)}
    code = "from issuebench.demo import demo_repos_dir; print(demo_repos_dir())"
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    assert len({out.strip() for out, _ in outputs}) == 1
    root = Path(outputs[0][0].strip())
    for bundle in demo.demo_bundles():
        clone = root / f"issuebench-demo__{bundle.stem}"
        assert git(clone, "status", "--porcelain") == ""
    assert not [p for p in root.iterdir() if p.is_dir() and p.name.startswith(".")]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.instance_id)
def test_task_reproduces_its_test_lists(task: Task, repos_dir: Path, tmp_path: Path) -> None:
    tree = checkout(repos_dir, task, tmp_path / "tree")
    git_apply(tree, task.test_patch)
    before = run_task_tests(tree, task)
    assert all(before.get(t) is not TestStatus.PASSED for t in task.FAIL_TO_PASS), before
    assert all(before.get(t) is TestStatus.PASSED for t in task.PASS_TO_PASS), before

    check = subprocess.run(["git", "apply", "--check", "-"], cwd=tree, input=task.patch, capture_output=True,
                           text=True)
    assert check.returncode == 0, f"the gold patch must apply cleanly: {check.stderr}"
    git_apply(tree, task.patch)
    after = run_task_tests(tree, task)
    assert {t for t, s in after.items() if s is TestStatus.PASSED} == set(after), after
    assert sorted(t for t in after if before.get(t) is not TestStatus.PASSED) == task.FAIL_TO_PASS
    assert sorted(t for t in after if before.get(t) is TestStatus.PASSED) == task.PASS_TO_PASS


def test_prediction_sets() -> None:
    ids = [t.instance_id for t in TASKS]
    assert sorted(MIXED) == sorted(ids)
    assert {p.model_name_or_path for p in MIXED.values()} == {"demo-mixed"}
    empty = demo.demo_predictions("empty")
    assert sorted(p.instance_id for p in empty) == sorted(ids) and all(p.is_empty for p in empty)
    gold = {p.instance_id: p.model_patch for p in demo.demo_predictions("gold")}
    assert gold == {t.instance_id: t.patch for t in TASKS}
    with pytest.raises(IssuebenchError, match="no demo predictions named 'nope'"):
        demo.demo_predictions("nope")


def test_mixed_predictions_show_every_verdict() -> None:
    expected = demo.expected_mixed()
    assert sorted(expected) == sorted(MIXED)
    assert expected == {i: d["status"] for i, d in DETAILS.items()}
    statuses = {InstanceStatus(s) for s in expected.values()}
    assert statuses == {InstanceStatus.RESOLVED, InstanceStatus.UNRESOLVED, InstanceStatus.EMPTY,
                        InstanceStatus.INVALID_PATCH, InstanceStatus.APPLY_FAILED}
    outcomes = {Outcome(d["outcome"]) for d in DETAILS.values() if d["outcome"]}
    assert outcomes == {Outcome.RESOLVED, Outcome.PARTIALLY_RESOLVED, Outcome.BREAKING_RESOLVED,
                        Outcome.NO_OP, Outcome.REGRESSION}
    assert PatchStatus.APPLIED_AFTER_REPAIR.value in {d["patch_status"] for d in DETAILS.values()}
    resolved_differently = [i for i, d in DETAILS.items() if d["status"] == "resolved"
                            and d["patch_status"] == "applied" and MIXED[i].model_patch != _task(i).patch]
    assert len(resolved_differently) >= 2, "correct fixes that differ from gold"


def _task(instance_id: str) -> Task:
    return next(t for t in TASKS if t.instance_id == instance_id)


@pytest.mark.parametrize("instance_id", sorted(MIXED))
def test_mixed_prediction_gets_its_expected_verdict(instance_id: str, repos_dir: Path, tmp_path: Path) -> None:
    """What the harness does, minus the sandbox: apply with the patch engine, run, grade."""
    task, want = _task(instance_id), DETAILS[instance_id]
    tree = checkout(repos_dir, task, tmp_path / "tree")
    applied = apply_patch(tree, MIXED[instance_id].model_patch)
    assert applied.status.value == want["patch_status"], applied.log
    if not applied.applied:
        return
    git_apply(tree, task.test_patch)
    graded = grade(run_task_tests(tree, task), task.FAIL_TO_PASS, task.PASS_TO_PASS)
    assert ("resolved" if graded.resolved else "unresolved") == want["status"]
    assert graded.outcome.value == want["outcome"]


@pytest.mark.slow
def test_generator_reproduces_the_committed_data() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_demo.py"), "--check"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
