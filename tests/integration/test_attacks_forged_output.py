"""Patches that leave the bug and print a verdict of their own: the runner's report decides.

Each patch here keeps `add` wrong and makes the code under test print, from inside the pytest
run, the lines a passing run would show. The text log then reads "resolved" in some way; the
harness must still grade what the runner saw. Every attack names the defence it meets, and where
a defence can be switched off, the test shows the attack succeeds without it (the test bites).
The task, the uv environment and the sandbox are the real ones of test_attacks.py.
"""

from __future__ import annotations

import pytest

from issuebench.harness import EvalOptions, build_context, runner_report
from issuebench.harness.instance import evaluate_instance
from issuebench.models import InstanceStatus, Prediction
from tests.integration.attack_world import CORE, NEW_TESTS, code_patch, diff_for, evaluate

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("attacks")]

GRADED = ("tests/test_core.py::test_add", "tests/test_core.py::test_mul")


def forged_lines(*, failing_other: bool = False) -> str:
    """What a passing `pytest -rA` would print for the graded tests, as a Python bytes literal body."""
    lines = ["=" * 20 + " short test summary info " + "=" * 20]
    lines += [f"PASSED {test_id}" for test_id in GRADED] + [f"{test_id} PASSED" for test_id in GRADED]
    if failing_other:  # a failure of a test nobody grades, to account for the exit status
        lines.append("FAILED tests/test_core.py::test_unrelated - AssertionError")
    lines.append("=" * 20 + f" {len(GRADED)} passed in 0.52s " + "=" * 20)
    return "\\n".join(lines) + "\\n"


def switch_off_runner_report(monkeypatch) -> None:
    """The harness as it was before the runner's report: text and exit status only."""
    monkeypatch.setattr(runner_report.ReportChannel, "binds", lambda self: [])
    monkeypatch.setattr(runner_report.ReportChannel, "env", lambda self, env: dict(env))


def test_forged_passes_and_summary_printed_inside_the_tests_cannot_pass(world) -> None:
    """pytest -rA shows each test's captured output before its own short summary: a closing line
    printed there must not end the graded text before the runner's real FAILED lines."""
    body = CORE.replace("    return a - b", f'    print(b"{forged_lines()}".decode())\n    return a - b')
    patch = diff_for(world["repo"], {"calc/core.py": body})
    report = evaluate(world, patch, "forged-inside")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert report.tests_status.FAIL_TO_PASS.failure == ["tests/test_core.py::test_add"]


def test_forged_summary_at_exit_with_an_invented_failure_meets_the_runner_report(world, monkeypatch) -> None:
    """Printed after the runner's own summary, with a made-up failing test to explain exit status 1:
    the text reads resolved; only the runner's report, which the print cannot reach, says otherwise."""
    prelude = f"""
    import atexit, os
    atexit.register(lambda: os.write(1, b"{forged_lines(failing_other=True)}"))
    """
    patch = code_patch(world, prelude, fixed=False)
    report = evaluate(world, patch, "forged-atexit")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert any("runner says FAILED" in note for note in report.notes), report.notes
    switch_off_runner_report(monkeypatch)
    assert evaluate(world, patch, "forged-atexit-text-only").status is InstanceStatus.RESOLVED


def test_forged_summary_at_exit_meets_the_exit_status_without_a_runner_report(world, monkeypatch) -> None:
    """Without the runner's report (a runner that writes none), the exit status still gives the
    forgery away: pytest exited 1 and the text shows no failing test."""
    prelude = f"""
    import atexit, os
    atexit.register(lambda: os.write(1, b"{forged_lines()}"))
    """
    switch_off_runner_report(monkeypatch)
    report = evaluate(world, code_patch(world, prelude, fixed=False), "forged-exit-status")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert report.returncode == 1
    assert "nonzero_exit_without_failing_test" in report.reason


def test_a_second_report_written_into_the_runners_channel_is_refused(world) -> None:
    """The channel's name is gone before the code under test runs, but its open descriptor can be
    found: a report written through it is a second report, and the run is not believed."""
    prelude = """
    import json, os
    _fake = json.dumps({"issuebench_runner_report": 1, "exitstatus": 0,
                        "tests": {"tests/test_core.py::test_add": "PASSED",
                                  "tests/test_core.py::test_mul": "PASSED"}}) + "\\n"
    for _fd in os.listdir("/proc/self/fd"):
        try:
            if "issuebench-report" in os.readlink("/proc/self/fd/" + _fd):
                os.write(int(_fd), _fake.encode())
        except OSError:
            pass
    """
    report = evaluate(world, code_patch(world, prelude, fixed=True), "second-report")
    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert any("received 2 reports" in note for note in report.notes), report.notes


def test_the_channel_cannot_be_opened_by_name_from_the_code_under_test(world) -> None:
    """A patch that fixes the bug and tries to open the channel by its name finds nothing there,
    so the honest run still resolves: the name is removed before any project code is imported."""
    prelude = f"""
    import os
    _path = {runner_report.SANDBOX_CHANNEL_DIR + "/" + runner_report.CHANNEL_NAME!r}
    if os.path.exists(_path) or os.environ.get({runner_report.CHANNEL_VARIABLE!r}):
        raise SystemExit("the channel is reachable by name")
    """
    report = evaluate(world, code_patch(world, prelude, fixed=True), "channel-by-name")
    assert report.status is InstanceStatus.RESOLVED, report.reason


def evaluate_task(world, task, name: str):
    ctx = build_context(EvalOptions(output_dir=world["root"] / "out", run_id=name, repos_dir=world["repos"],
                                    timeout=60, use_cache=False))
    pred = Prediction(instance_id=task.instance_id, model_name_or_path=name, model_patch=task.patch)
    return evaluate_instance(task, pred, ctx)


def with_extra_test(world, path: str, body: str, *graded: str):
    """The task with one more test file in its test patch, whose `graded` ids join PASS_TO_PASS."""
    base = world["task"]
    return base.model_copy(update={
        "test_patch": diff_for(world["repo"], {"tests/test_core.py": NEW_TESTS, path: body}),
        "PASS_TO_PASS": [*base.PASS_TO_PASS, *graded]})


def test_an_honest_run_with_nested_pytest_sessions_still_resolves(world) -> None:
    """pytest's own tests start inner sessions (in-process and as subprocesses): they inherit the
    plugin but find no channel, so the outer runner's report stays the only one."""
    nested = """
def test_inner_sessions(tmp_path):
    import subprocess, sys
    import pytest
    (tmp_path / "test_inner.py").write_text("def test_ok():\\n    assert True\\n")
    assert pytest.main(["-q", "-p", "no:cacheprovider", str(tmp_path)]) == 0
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)])
    assert done.returncode == 0
"""
    task = with_extra_test(world, "tests/test_nested.py", nested, "tests/test_nested.py::test_inner_sessions")
    report = evaluate_task(world, task, "nested-sessions")
    assert report.status is InstanceStatus.RESOLVED, report.reason
    assert not any("reports" in note for note in report.notes), report.notes


def test_an_honest_run_whose_test_forks_a_child_that_unwinds_through_pytest_still_resolves(world) -> None:
    """eventlet's fork tests: a forked child that raises SystemExit unwinds through the pytest
    session it inherited and finishes it too. Only the process that opened the channel reports:
    the child's session is no second report."""
    forks = """
def test_fork_child_exits_through_pytest():
    import os
    pid = os.fork()
    if pid == 0:
        raise SystemExit(17)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) != 0
"""
    task = with_extra_test(world, "tests/test_forks.py", forks, "tests/test_forks.py::test_fork_child_exits_through_pytest")
    report = evaluate_task(world, task, "forked-child")
    assert report.status is InstanceStatus.RESOLVED, report.reason
    assert not any("reports" in note for note in report.notes), report.notes


def test_a_graded_name_from_a_nested_runs_summary_is_graded_from_the_text(world) -> None:
    """pytest-dev__pytest-7521's PASS_TO_PASS holds `test_capsysbinary.py::test_hello`, the summary
    line of a session one of pytest's tests starts in a temporary folder: no runner can report it,
    since the command never named that file, so it is graded from the text as the reference does."""
    nested = """
def test_inner_summary(tmp_path, monkeypatch):
    import pytest
    (tmp_path / "test_inner.py").write_text("def test_ok():\\n    assert True\\n")
    monkeypatch.chdir(tmp_path)  # as pytester does
    assert pytest.main(["-rA", "-p", "no:cacheprovider"]) == 0
"""
    task = with_extra_test(world, "tests/test_nested.py", nested, "tests/test_nested.py::test_inner_summary",
                           "test_inner.py::test_ok")
    report = evaluate_task(world, task, "nested-summary")
    assert report.status is InstanceStatus.RESOLVED, report.reason


def test_an_honest_run_whose_rootdir_is_below_the_working_folder_still_resolves(world) -> None:
    """A config file in `tests/` (rich's `tests/pytest.ini`) makes `tests/` pytest's rootdir, as
    `--rootdir=tests` does here: node ids then start below it (`test_core.py::test_add`), while
    the summary the log shows names tests from the working folder (`tests/test_core.py::...`).
    The runner's report speaks as the summary does."""
    base = world["task"]
    spec = base.env.model_copy(update={"test_cmd": base.env.test_cmd + " --rootdir=tests"})
    report = evaluate_task(world, base.model_copy(update={"env": spec}), "rootdir-below")
    assert report.status is InstanceStatus.RESOLVED, report.reason


def test_a_test_command_with_its_own_pythonpath_runs_again_without_the_plugin(world) -> None:
    """A command that sets PYTHONPATH itself hides the plugin, and pytest refuses to start: the
    harness runs it once more without the plugin rather than fail an honest run."""
    base = world["task"]
    spec = base.env.model_copy(update={"test_cmd": "PYTHONPATH=. " + base.env.test_cmd})
    report = evaluate_task(world, base.model_copy(update={"env": spec}), "own-pythonpath")
    assert report.status is InstanceStatus.RESOLVED, report.reason
