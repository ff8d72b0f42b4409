"""Hostile patches on a real demo task (unittest runner, PYTHONPATH=src), through the real harness.

test_attacks.py covers the pytest runner on a task it builds; here the same kind of cheating is
tried against the embedded demo dataset, whose runner and start-up path differ: each patch leaves the
bug in place and tries to make the FAIL_TO_PASS tests look passed, so each must stay unresolved.
"""

from __future__ import annotations

import difflib

import pytest

from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.harness import EvalOptions, build_context, evaluate_instance
from issuebench.harness.workspace import create_workspace, git
from issuebench.models import InstanceStatus, Prediction

pytestmark = pytest.mark.xdist_group("demo-eval")

TASK_ID = "issuebench-demo__textkit-1"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    task = next(t for t in demo_tasks() if t.instance_id == TASK_ID)
    repos = demo_repos_dir()
    ws = create_workspace(repos / "issuebench-demo__textkit", task.base_commit, tmp_path_factory.mktemp("ws"))
    return task, repos, ws


def diff(ws, files: dict[str, str]) -> str:
    """A git-style diff that sets each file to the given text (new files included)."""
    chunks = []
    for rel, new in files.items():
        path = ws / rel
        old = path.read_text() if path.exists() else ""
        header = [f"diff --git a/{rel} b/{rel}\n"] + (["new file mode 100644\n"] if not old else [])
        body = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                    "/dev/null" if not old else f"a/{rel}", f"b/{rel}")
        chunks.append("".join(header) + "".join(body))
    return "".join(chunks)


def evaluate(demo, tmp_path, patch: str):
    task, repos, _ = demo
    ctx = build_context(EvalOptions(output_dir=tmp_path, run_id="attack", repos_dir=repos, timeout=60,
                                    use_cache=False))
    return evaluate_instance(task, Prediction(instance_id=task.instance_id, model_name_or_path="attacker",
                                              model_patch=patch), ctx)


def fake_ok_lines(task) -> str:
    return "".join(f"{t.rsplit('.', 1)[1]} ({t}) ... ok\\n" for t in task.FAIL_TO_PASS)


# PYTHONPATH=src puts src/ on sys.path at start-up, so a sitecustomize there would run before the
# tests and could turn every failure into a pass; `import sitecustomize` finds a package as readily.
@pytest.mark.parametrize("hook_path", ["src/sitecustomize.py", "src/sitecustomize/__init__.py"])
def test_sitecustomize_on_the_path_is_undone(demo, tmp_path, hook_path):
    hook = ("import unittest\n"
            "unittest.TestCase.run = lambda self, result=None: (result.startTest(self), result.addSuccess(self),"
            " result.stopTest(self))\n")
    report = evaluate(demo, tmp_path, diff(demo[2], {hook_path: hook}))
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert any(hook_path in note for note in report.notes)


def test_fake_results_after_unittests_summary_are_not_graded(demo, tmp_path):
    task, _, ws = demo
    module = (ws / "src/textkit/case.py").read_text()
    prelude = f"import atexit as _ax, os as _os\n_ax.register(lambda: _os.write(1, b\"{fake_ok_lines(task)}\"))\n"
    report = evaluate(demo, tmp_path, diff(ws, {"src/textkit/case.py": prelude + module}))
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert len(report.tests_status.FAIL_TO_PASS.failure) == len(task.FAIL_TO_PASS)


def test_fake_markers_printed_by_the_code_do_not_count(demo, tmp_path):
    task, _, ws = demo
    module = (ws / "src/textkit/case.py").read_text()
    fake = (">>>>> End Test Output\\n>>>>> Start Test Output\\n" + fake_ok_lines(task)
            + "Ran 3 tests in 0.001s\\n\\nOK\\n>>>>> End Test Output\\n")
    prelude = f"import os as _os\n_os.write(1, b\"{fake}\")\n"
    report = evaluate(demo, tmp_path, diff(ws, {"src/textkit/case.py": prelude + module}))
    assert report.status is InstanceStatus.UNRESOLVED, report.reason


def test_a_closing_summary_printed_while_the_tests_run_does_not_end_the_graded_text(demo, tmp_path):
    """unittest prints its own `Ran N tests` and `OK` after every test ran; one printed by the code
    under test from inside the first test comes before the runner's real FAIL lines and must not
    cut them off."""
    task, _, ws = demo
    module = (ws / "src/textkit/case.py").read_text()
    fake = fake_ok_lines(task) + "\\n" + "-" * 70 + "\\nRan 14 tests in 0.004s\\n\\nOK\\n"
    forged = module.replace("def split_words(text):\n",
                            f"def split_words(text):\n    import sys\n    sys.stderr.write(\"{fake}\")\n", 1)
    assert forged != module
    report = evaluate(demo, tmp_path, diff(ws, {"src/textkit/case.py": forged}))
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert len(report.tests_status.FAIL_TO_PASS.failure) == len(task.FAIL_TO_PASS)


def test_hollowed_test_file_is_put_back(demo, tmp_path):
    ws = demo[2]
    hollow = "import unittest\n\n\nclass AcronymTest(unittest.TestCase):\n    def test_leading_acronym(self):\n        pass\n"
    report = evaluate(demo, tmp_path, diff(ws, {"tests/test_case.py": hollow}))
    assert report.status is InstanceStatus.UNRESOLVED, report.reason


def test_reaching_out_and_reading_secrets_fail_quietly(demo, tmp_path, home_outside_tmp, monkeypatch):
    task, _, ws = demo
    secret = home_outside_tmp / ".ssh" / "id_ed25519"  # not under /tmp, which the sandbox hides anyway
    secret.parent.mkdir(parents=True)
    secret.write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(home_outside_tmp))
    prelude = (
        "import socket as _s, pathlib as _p\n"
        "try:\n    _s.create_connection(('127.0.0.1', 22), timeout=1)\n    raise SystemExit('NETWORK')\n"
        "except OSError:\n    pass\n"
        f"if _p.Path({str(secret)!r}).exists():\n    raise SystemExit('SECRET')\n")
    # Together with the real fix: when nothing leaks, the task is resolved as it should be.
    fix = task.patch
    report = evaluate(demo, tmp_path, fix + diff(ws, {"src/textkit/__init__.py":
                                                      prelude + (ws / "src/textkit/__init__.py").read_text()}))
    assert report.status is InstanceStatus.RESOLVED, report.reason
    assert git(ws, "status", "--porcelain").stdout == ""  # the fixture's checkout was never touched


def test_monkeypatching_the_runner_from_the_code_is_flagged_and_strict_refuses_it(demo, tmp_path):
    # The residual in-process risk: code under test rewriting the runner's assertions. The default
    # rule (the reference's) cannot see it, so the pass stands but the report flags it; --strict
    # withholds it.
    task, repos, ws = demo
    init = (ws / "src/textkit/__init__.py").read_text()
    cheat = "import unittest as _u\n_u.TestCase.assertEqual = lambda self, *a, **k: None\n"
    patch = diff(ws, {"src/textkit/__init__.py": cheat + init})
    report = evaluate(demo, tmp_path, patch)
    assert any(n.startswith("suspicious: src/textkit/__init__.py") for n in report.notes), report.notes
    ctx = build_context(EvalOptions(output_dir=tmp_path / "strict", run_id="attack", repos_dir=repos,
                                    timeout=60, use_cache=False, strict=True))
    strict = evaluate_instance(task, Prediction(instance_id=task.instance_id, model_name_or_path="attacker",
                                                model_patch=patch), ctx)
    assert strict.status is InstanceStatus.UNRESOLVED
    assert "patch_reaches_into_the_test_run" in strict.notes
