"""Hostile patches through the real harness: each must get the verdict it earns, never a pass it faked.

One small task (attack_world.py: a repository whose `add` is wrong, a test patch adding `test_add`);
every attack is a real patch on it, evaluated by `evaluate_instance` with the real uv environment
and the real bubblewrap sandbox. Attacks that only want to escape fix the bug too, so the assert
shows the escape failed without costing the verdict; attacks that want a pass they did not earn
leave the bug in, so only a cheat could make them resolved.
"""

from __future__ import annotations

import os
import socket
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest

from issuebench.harness import EvalOptions, build_context
from issuebench.harness.instance import evaluate_instance
from issuebench.models import InstanceStatus, Prediction
from tests.integration.attack_world import CORE, FIXED, NEW_TESTS, code_patch, diff_for, evaluate, git  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("attacks")]

# --- the baseline: the harness grades an honest run correctly --------------------------------

def test_gold_resolves_and_no_fix_does_not(world) -> None:
    assert evaluate(world, world["task"].patch, "gold").status is InstanceStatus.RESOLVED
    noop = code_patch(world, "X = 1", fixed=False)
    assert evaluate(world, noop, "noop").status is InstanceStatus.UNRESOLVED


# --- escapes: each fixes the bug, so a failed escape still resolves ----------------------------

def test_network_outside_and_loopback_are_unreachable(world, tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]
    hits: list[int] = []

    def accept() -> None:
        server.settimeout(1)
        end = time.monotonic() + 120
        while time.monotonic() < end and not stop.is_set():
            try:
                conn, _ = server.accept()
                hits.append(1)
                conn.close()
            except OSError:
                continue

    stop = threading.Event()
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    # The fix only works when the network does: reaching either place would resolve the task.
    prelude = f"""
    import socket
    REACHED = False
    for where in (("192.0.2.1", 9), ("127.0.0.1", {port})):
        try:
            if where[1] == 9:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(where)  # route lookup only
            else:
                socket.create_connection(where, timeout=3)
            REACHED = True
        except OSError:
            pass
    """
    body = textwrap.dedent(prelude).strip() + "\n\n\n" + CORE.replace(
        "return a - b", "return a + b if REACHED else a - b")
    patch = diff_for(world["repo"], {"calc/core.py": body})
    report = evaluate(world, patch, "network")
    stop.set()
    thread.join()
    server.close()
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert hits == []


def test_secret_in_home_cannot_be_read(world, home_outside_tmp: Path, monkeypatch) -> None:
    home = home_outside_tmp  # not under /tmp, which the sandbox hides anyway
    (home / ".netrc").write_text("machine example.com password hunter2\n")
    monkeypatch.setenv("HOME", str(home))
    prelude = f"""
    import os
    try:
        SECRET = open({str(home / '.netrc')!r}).read()
    except OSError:
        SECRET = ""
    SECRET += "".join(open(os.path.expanduser("~/.netrc")).read() if os.path.exists(os.path.expanduser("~/.netrc")) else "")
    """
    body = textwrap.dedent(prelude).strip() + "\n\n\n" + CORE.replace(
        "return a - b", "return a + b if 'hunter2' in SECRET else a - b")
    report = evaluate(world, diff_for(world["repo"], {"calc/core.py": body}), "secret")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason


def test_writes_outside_the_workspace_do_not_land(world, tmp_path: Path) -> None:
    target = tmp_path / "pwned.txt"
    ib_home = Path(os.environ["ISSUEBENCH_HOME"])
    prelude = f"""
    for path in ({str(target)!r}, "/usr/pwned.txt", {str(ib_home / 'pwned.txt')!r}):
        try:
            open(path, "w").write("owned")
        except OSError:
            pass
    """
    report = evaluate(world, code_patch(world, prelude, fixed=True), "write-out")
    assert report.status is InstanceStatus.RESOLVED, report.reason
    assert not target.exists() and not Path("/usr/pwned.txt").exists()
    assert not (ib_home / "pwned.txt").exists()


def test_pth_file_cannot_persist_into_the_shared_env(world) -> None:
    prelude = """
    import site, sys
    for d in site.getsitepackages() + [p for p in sys.path if p.endswith("site-packages")]:
        try:
            open(d + "/zz_evil.pth", "w").write("import os; os.environ['EVIL'] = '1'\\n")
        except OSError:
            pass
    """
    patch = code_patch(world, prelude, fixed=False, extra={"zz_evil.pth": "import calc\n"})
    report = evaluate(world, patch, "pth")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    envs = Path(os.environ["ISSUEBENCH_HOME"]) / "envs"
    assert list(envs.rglob("zz_evil.pth")) == []
    # The next, honest instance still sees a clean environment.
    assert evaluate(world, world["task"].patch, "after-pth").status is InstanceStatus.RESOLVED


# --- resource attacks: each ends in its own status -------------------------------------------

def test_fork_bomb_is_process_limit(world) -> None:
    prelude = """
    import os
    while True:
        try:
            os.fork()
        except OSError:
            pass
    """
    report = evaluate(world, code_patch(world, prelude, fixed=True), "forkbomb")
    assert report.status is InstanceStatus.PROCESS_LIMIT, report.reason


def test_endless_allocation_is_memory_limit(world) -> None:
    prelude = """
    HOG = []
    while True:
        HOG.append(b"x" * 10_000_000)
    """
    report = evaluate(world, code_patch(world, prelude, fixed=True), "alloc", memory_mb=400)
    assert report.status is InstanceStatus.MEMORY_LIMIT, report.reason


def test_detached_sleeper_is_timeout_and_gone(world) -> None:
    marker = f"{time.time() % 1000:.6f}"
    prelude = f"""
    import subprocess, time
    subprocess.Popen(["setsid", "sleep", "1{marker}"])
    subprocess.Popen(["sh", "-c", "nohup sleep 2{marker} >/dev/null 2>&1 &"])
    time.sleep(1000)
    """
    report = evaluate(world, code_patch(world, prelude, fixed=True), "sleeper", timeout=15)
    assert report.status is InstanceStatus.TIMEOUT, report.reason
    time.sleep(0.3)
    leftovers = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert leftovers == []


def test_printing_gigabytes_is_output_limit(world) -> None:
    prelude = """
    import os
    chunk = b"spam " * 200_000
    for _ in range(5_000):  # 5 GB if nothing stops it
        os.write(1, chunk)
    """
    report = evaluate(world, code_patch(world, prelude, fixed=True), "spam")
    assert report.status is InstanceStatus.OUTPUT_LIMIT, report.reason
    out = world["root"] / "out" / "logs" / "run_evaluation" / "spam" / "spam" / "acme__calc-1"
    assert sum(p.stat().st_size for p in out.iterdir()) < 50_000_000


def test_killing_its_parent_does_not_hang_or_pass(world) -> None:
    prelude = """
    import os, signal
    os.kill(os.getppid(), signal.SIGKILL)
    """
    start = time.monotonic()
    report = evaluate(world, code_patch(world, prelude, fixed=False), "parricide", timeout=60)
    assert time.monotonic() - start < 50
    # Its parent is the sandbox's init, which ignores the signal: the tests run on and fail.
    assert report.status is InstanceStatus.UNRESOLVED, (report.status, report.reason)


# --- cheats: the bug stays, only a cheat could pass ------------------------------------------

HOOK = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""


def test_conftest_hook_marking_all_passed_is_undone(world) -> None:
    patch = diff_for(world["repo"], {"conftest.py": HOOK, "tests/conftest.py": HOOK})
    report = evaluate(world, patch, "conftest")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert any("conftest.py" in note for note in report.notes)


def test_conftest_hook_in_a_plain_diff_is_undone(world) -> None:
    # No 'diff --git' headers: the hook-file guard must still see the files.
    git_style = diff_for(world["repo"], {"tests/conftest.py": HOOK})
    plain = "\n".join(line for line in git_style.splitlines()
                      if not line.startswith(("diff --git", "new file mode", "index "))) + "\n"
    report = evaluate(world, plain, "conftest-plain")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason


def test_editing_the_test_to_assert_nothing_is_undone(world) -> None:
    hollow = NEW_TESTS.replace("assert add(2, 3) == 5", "assert True")
    patch = diff_for(world["repo"], {"tests/test_core.py": hollow, "tests/test_other.py": "def test_x():\n    pass\n"})
    report = evaluate(world, patch, "hollow")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason


def test_a_test_file_the_model_edits_or_deletes_is_put_back_with_a_note(world) -> None:
    """The test patch's own files are reset before it applies; the result and the log say so."""
    for name, change in (("edit", NEW_TESTS.replace("== 5", "== -1")), ("delete", None)):
        report = evaluate(world, world["task"].patch + diff_for(world["repo"], {"tests/test_core.py": change}),
                          f"test-file-{name}")
        assert report.status is InstanceStatus.RESOLVED, report.reason
        assert any("put back the test patch's files" in n and "tests/test_core.py" in n for n in report.notes)
        log = world["root"] / "out/logs/run_evaluation" / f"test-file-{name}" / f"test-file-{name}"
        assert "tests/test_core.py" in (log / world["task"].instance_id / "run_instance.log").read_text()


def test_fake_passes_closed_by_a_fake_end_marker_cannot_pass(world, monkeypatch) -> None:
    """The unfixed `add` prints every test 'passed' and an end marker; pytest -rA shows that output
    in the report of the failing test, before its own summary line. Under the reference's rule (the
    first end marker closes the section) the fake is all that gets graded: the nonce is the defence."""
    fake = "PASSED tests/test_core.py::test_add\\nPASSED tests/test_core.py::test_mul\\n>>>>> End Test Output\\n"
    body = "import os\n\n\n" + CORE.replace("    return a - b", f'    os.write(1, b"{fake}")\n    return a - b')
    patch = diff_for(world["repo"], {"calc/core.py": body})
    report = evaluate(world, patch, "fake-end")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    # Without the nonce the same patch resolves the task on the text alone: the test bites. (The
    # exit status and the runner's own report, checked apart in test_attacks_forged_output.py,
    # would refuse it too; they are switched off here so that the nonce alone is tried.)
    from issuebench.harness import runner_report
    from issuebench.parsers.markers import extract_test_output

    monkeypatch.setattr("issuebench.harness.test_run.extract_test_output",
                        lambda text, nonce=None: extract_test_output(text))
    monkeypatch.setattr("issuebench.grading.exit_code_unexplained", lambda status_map, returncode: False)
    monkeypatch.setattr(runner_report.ReportChannel, "env", lambda self, env: dict(env))
    assert evaluate(world, patch, "fake-end-no-nonce").status is InstanceStatus.RESOLVED


def test_fake_summary_printed_at_exit_cannot_pass(world) -> None:
    prelude = """
    import atexit, os
    atexit.register(lambda: os.write(1, b"PASSED tests/test_core.py::test_add\\n"))
    """
    report = evaluate(world, code_patch(world, prelude, fixed=False), "atexit")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason


def test_plugin_via_project_config_cannot_pass(world) -> None:
    patch = diff_for(world["repo"], {"evilplugin.py": HOOK,
                                     "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p evilplugin"\n'})
    report = evaluate(world, patch, "plugin")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason


def test_plugin_via_an_entry_point_in_distribution_metadata_cannot_pass(world) -> None:
    # `python -m pytest` puts the working folder on sys.path, and pytest loads every `pytest11`
    # entry point of the distributions it finds there: metadata a patch adds names a plugin.
    patch = diff_for(world["repo"], {"evilplugin.py": HOOK,
                                     "evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
                                     "evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = evilplugin\n"})
    report = evaluate(world, patch, "entry-point")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert any("dist-info" in note for note in report.notes)


def test_plugin_via_a_dotted_pytest_ini_cannot_pass(world) -> None:
    # pytest reads `.pytest.ini` before pyproject.toml, tox.ini and setup.cfg.
    patch = diff_for(world["repo"], {"evilplugin.py": HOOK, ".pytest.ini": "[pytest]\naddopts = -p evilplugin\n"})
    report = evaluate(world, patch, "dotted-ini")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert any(".pytest.ini" in note for note in report.notes)


def test_a_rewritten_test_runner_in_the_repository_cannot_pass(world) -> None:
    """A task whose test command runs a script of the repository: a patch that rewrites the script
    prints whatever results it likes, so the script is put back like a test file."""
    task = world["task"]
    task = task.model_copy(update={"env": task.env.model_copy(update={"test_cmd": "sh run_tests.sh"})})
    fake = ("printf 'PASSED tests/test_core.py::test_add\\nPASSED tests/test_core.py::test_mul\\n"
            "============ 2 passed in 0.01s ============\\n'\n")
    for name, patch in (("honest", task.patch), ("runner", diff_for(world["repo"], {"run_tests.sh": fake}))):
        ctx = build_context(EvalOptions(output_dir=world["root"] / "out", run_id=f"runner-{name}",
                                        repos_dir=world["repos"], timeout=60, use_cache=False))
        report = evaluate_instance(task, Prediction(instance_id=task.instance_id, model_name_or_path=name,
                                                    model_patch=patch), ctx)
        assert report.resolved is (name == "honest"), (name, report.reason)
    assert any("run_tests.sh" in note for note in report.notes)


def test_a_module_shadowing_the_test_runner_cannot_pass(world) -> None:
    # `python -m pytest` looks for `pytest` in the working folder first: a patch's own pytest
    # package there would run instead of the real one and print what it likes.
    fake = ("import sys\nprint('PASSED tests/test_core.py::test_add')\nprint('PASSED tests/test_core.py::test_mul')\n"
            "print('============ 2 passed in 0.01s ============')\nsys.exit(0)\n")
    for layout in ({"pytest/__init__.py": "", "pytest/__main__.py": fake}, {"pytest.py": fake}):
        report = evaluate(world, diff_for(world["repo"], layout), "shadow")
        assert report.status is InstanceStatus.UNRESOLVED, (layout.keys(), report.reason)
