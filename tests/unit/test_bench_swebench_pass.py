"""benchmarks/swebench_pass.py: which rows run, how misses are grouped, how CPU, memory and disk
are counted, and what makes a pass refuse to start or continue."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.gitrepo import commit_files, init_repo

ROOT = Path(__file__).parents[2]


def _module(name: str):
    sys.path.insert(0, str(ROOT / "benchmarks"))  # the script imports its siblings
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is made
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


report = _module("swebench_pass_report")
measure = _module("swebench_pass_measure")
bench = _module("swebench_pass")


def _result(status: str, reason: str = "", f2p_fail=(), p2p_fail=(), resolved: bool = False) -> dict:
    return {"status": status, "reason": reason, "resolved": resolved,
            "tests_status": {"FAIL_TO_PASS": {"success": [], "failure": list(f2p_fail)},
                             "PASS_TO_PASS": {"success": ["t0"], "failure": list(p2p_fail)}}}


def test_misses_are_grouped_by_status_and_the_first_part_of_their_reason() -> None:
    results = {
        "a": _result("unresolved", "1 of 2 FAIL_TO_PASS tests fail", f2p_fail=["t1"]),
        "b": _result("unresolved", "2 of 3 FAIL_TO_PASS tests fail", f2p_fail=["t1", "t2"]),
        "c": _result("unresolved", "1 of 1 FAIL_TO_PASS tests fail; 1 of 9 PASS_TO_PASS tests fail",
                     f2p_fail=["t1"], p2p_fail=["t3"]),
        "d": _result("env_failed", "environment 5b1a99ca0aa5ca3e failed to build: the recipe needs Debian "
                                   "packages that are not installed: libecco"),
        "e": _result("env_failed", "environment 0123456789abcdef failed to build: the recipe needs Debian "
                                   "packages that are not installed: libfoo"),
        "f": _result("error", "no workspace: the clone lacks astropy/utils/iers/data/eopc04 (4.5 MiB)"),
        "g": _result("needs_network", "the task's tests need the internet: 4 of 4 FAIL_TO_PASS tests fail",
                     f2p_fail=["t1"]),
        "h": _result("resolved", "all FAIL_TO_PASS and PASS_TO_PASS tests pass", resolved=True),
        "i": _result("timeout", "the run took longer than 1800s and was stopped; raise --timeout"),
    }
    groups = report.group_misses([*results, "never-run"], results)
    assert groups == {
        "env_failed: environment … failed to build: the recipe needs Debian packages that are not installed":
            ["d", "e"],
        "unresolved: FAIL_TO_PASS tests fail": ["a", "b"],
        "error: no workspace: the clone lacks astropy/utils/iers/data/eopcN": ["f"],
        report.NEEDS_NETWORK: ["g"],
        report.NOT_RUN: ["never-run"],
        "timeout: the run took longer than Ns and was stopped": ["i"],
        "unresolved: FAIL_TO_PASS and PASS_TO_PASS tests fail": ["c"],
    }


def _rows() -> list[dict]:
    return [
        {"instance_id": "o__a-1", "repo": "o/a", "datasets": ["lite", "verified"], "at_hand": True, "in_pass": True},
        {"instance_id": "o__a-2", "repo": "o/a", "datasets": ["lite"], "at_hand": True, "in_pass": True},
        {"instance_id": "o__net-1", "repo": "o/net", "datasets": ["verified"], "at_hand": True, "in_pass": True},
        {"instance_id": "o__b-1", "repo": "o/b", "datasets": ["verified"], "at_hand": False, "in_pass": False},
    ]


def _attempt(user: float, system: float, wall: float, rss: int = 1000, pss: int = 2000, **more) -> dict:
    return {"user_seconds": user, "sys_seconds": system, "wall_seconds": wall, "max_rss_kib": rss,
            "tree_pss_peak_kib": pss, "started_epoch": 100.0, "ended_epoch": 100.0 + wall, **more}


def _summary(**results) -> dict:
    gold = {"o__a-1": _result("resolved", resolved=True), "o__a-2": _result("unresolved", f2p_fail=["x"]),
            "o__net-1": _result("needs_network", "needs the internet")}
    steps = {report.GOLD_COLD: gold, report.GOLD_WARM: gold,
             report.NOOP_COLD: {i: _result("unresolved", f2p_fail=["x"]) for i in gold}, **results}
    usage = {report.ENVIRONMENTS: [_attempt(30, 6, 50)],
             report.GOLD_COLD: [_attempt(4, 2, 10, rss=5000), _attempt(2, 1, 5, pss=9000, interrupted=True)],
             report.NOOP_COLD: [_attempt(6, 0, 7)]}
    steps.setdefault(report.ENVIRONMENTS, {i: _result("apply_failed") for i in gold})
    return report.summarise({"commit": "abc"}, _rows(), steps, usage, [], {"folders": {}, "total": 0}, {})


def test_core_seconds_add_up_the_attempts_of_a_resumed_step_per_instance_of_the_pass() -> None:
    summary = _summary()
    gold = summary["steps"][report.GOLD_COLD]
    assert (gold["core_seconds"], gold["wall_seconds"], gold["attempts"]) == (9.0, 15.0, 2)
    assert (gold["max_rss_kib"], gold["tree_pss_peak_kib"], gold["interrupted_attempts"]) == (5000, 9000, 1)
    assert gold["core_seconds_per_instance"] == 3.0
    # Cold: environments 36 + gold 9 + no-op 6 core-seconds over the 3 instances of the pass.
    assert summary["per_instance_core_seconds"]["cold_pass"] == 17.0
    assert summary["per_instance_core_seconds"][report.ENVIRONMENTS] == 12.0


def test_a_pass_figure_over_a_step_not_every_instance_finished_is_said_not_finished() -> None:
    summary = _summary(**{report.NOOP_COLD: {"o__a-1": _result("unresolved", f2p_fail=["x"])}})
    # no-op stopped after 1 of 3: its 6 core-seconds over 3 instances would read as a cheap pass.
    assert summary["per_instance_core_seconds"]["cold_pass"] is None
    assert summary["per_instance_core_seconds"]["warm_pass"] is None  # no warm no-op at all
    assert summary["steps"][report.NOOP_COLD]["core_seconds_per_instance"] == 6.0
    assert "**Per instance: cold pass not finished**" in report.render(summary)


def test_rows_needing_the_network_stay_out_of_the_offline_figure_and_of_the_misses() -> None:
    summary = _summary()
    verified, lite = summary["datasets"]["verified"], summary["datasets"]["lite"]
    assert (verified["rows"], verified["at_hand"], verified["run"], verified["needs_network"]) == (3, 2, 2, 1)
    assert (verified["offline"], verified["gold_resolved"]) == (1, 1)
    assert (lite["offline"], lite["gold_resolved"]) == (2, 1)
    assert summary["misses"] == {"unresolved: FAIL_TO_PASS tests fail": ["o__a-2"]}
    assert summary["needs_network"] == ["o__net-1"]
    text = report.render(summary)
    assert "| verified | 3 | 2 | 2 | 2 | 1 | 1/1 (100.0%) | 0/2 |" in text
    assert "- needs network, apart (1): o__net-1" in text


def test_a_verdict_that_changes_between_cold_and_warm_is_named() -> None:
    warm = {"o__a-1": _result("unresolved", f2p_fail=["x"]), "o__a-2": _result("unresolved", f2p_fail=["x"])}
    summary = _summary(**{report.GOLD_WARM: warm})
    assert summary["verdict_changed_warm"] == ["o__a-1"]
    assert "differs between cold and warm on: o__a-1" in report.render(summary)


def test_wall_over_the_tests_own_time_counts_only_instances_whose_tests_ran() -> None:
    figures = report.duration_figures({
        "a": {"durations": {"workspace": 0.1, "env": 0.2, "tests": 2.0, "total": 2.5}},
        "b": {"durations": {"workspace": 0.1, "env": 0.2, "tests": 8.0, "total": 9.5}},
        "c": {"durations": {"workspace": 0.1, "env": 3.0, "total": 3.2}},   # the env failed: no tests
    })
    assert figures["with_tests"] == 2
    assert figures["total_over_tests"] == 1.2   # 12 s over 10 s
    assert figures["median_total_over_tests"] == 1.22


def test_each_environment_is_counted_in_the_step_that_built_it() -> None:
    records = [{"state": "built", "build_seconds": 10, "built_at_epoch": 105.0},
               {"state": "built", "build_seconds": 30, "built_at_epoch": 250.0},
               {"state": "failed", "reason": "environment abcdef0123 failed to build: uv pip install: boom"}]
    figures = report.environment_figures(records, {report.ENVIRONMENTS: [(100.0, 200.0)],
                                                   report.GOLD_COLD: [(240.0, 260.0)]})
    assert figures["built_by_step"] == {report.ENVIRONMENTS: 1, report.GOLD_COLD: 1}
    assert (figures["build_seconds_total"], figures["failed"]) == (40.0, 1)
    assert figures["failed_reasons"] == {"environment … failed to build: uv pip install": 1}


def test_a_builds_profile_splits_its_timed_steps_into_failed_attempts_and_sandboxed_installs(tmp_path: Path) -> None:
    """Read from a log written as a build writes it (BuildLog and its `took` line)."""
    import time

    from issuebench.envs.build_log import BuildLog, took

    log = BuildLog(tmp_path / "build.log")
    for command, seconds, code in (("uv pip install a", 3.0, 1), ("uv pip install b", 2.0, 0),
                                   ("(sandbox, network=True) pip install -e .", 5.0, 0)):
        log.write(f"$ {command}\nsome output\n")
        log.write(took(time.monotonic() - seconds, code))
    log.close()
    profile = bench.build_profile(tmp_path / "build.log")
    assert {k: round(v) for k, v in profile.items()} == {"steps_seconds": 10, "failed_steps_seconds": 3,
                                                         "sandboxed_seconds": 5}
    records = [{"state": "built", "build_seconds": 11, "built_at_epoch": 1.0, **profile}]
    figures = report.environment_figures(records, {})
    assert round(figures["failed_steps_seconds"]) == 3 and round(figures["sandboxed_seconds"]) == 5


def test_the_markdown_names_no_path_of_the_machine(tmp_path: Path) -> None:
    summary = _summary()
    summary["meta"].update(command="python benchmarks/swebench_pass.py --repos CLONES --output OUT",
                           uv_cache_note="uv's cache was kept")
    summary["disk"] = {"folders": {"environments": 2**30}, "total": 2**30}
    text = report.render(summary)
    assert str(tmp_path) not in text
    assert re.search(r"(?<![\w.)])/[\w.-]+/", text) is None   # no absolute path at all
    assert "| environments | 1.00 GiB |" in text


def test_a_childs_cpu_and_its_grandchilds_are_counted(tmp_path: Path) -> None:
    """The usage of every descendant the child waited for is in the delta, not only the child's."""
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass\n"
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import subprocess, sys
        subprocess.run([sys.executable, "-c", {burn!r}], check=True)
        exec({burn!r})
    """))
    usage = measure.run_measured([sys.executable, str(script)], env=os.environ, log=tmp_path / "log")
    assert usage.returncode == 0 and not usage.interrupted
    assert usage.cpu_seconds >= 0.75   # 0.4 s in each of the two processes
    assert usage.max_rss_kib > 1000     # a Python process's resident set, in KiB
    assert (tmp_path / "log").read_text().startswith("$ ")


def test_a_stop_reaches_the_step_of_a_pass_started_in_the_background(tmp_path: Path) -> None:
    """`nohup ... &` starts the pass with SIGINT ignored; its step must still take the Ctrl-C the
    pass forwards on SIGTERM, stop, and be waited for."""
    step = tmp_path / "step.py"
    step.write_text(textwrap.dedent("""
        import sys, time
        print("started", flush=True)
        try:
            time.sleep(30)
        except KeyboardInterrupt:
            print("stopped", flush=True)
            sys.exit(130)
        print("ran on", flush=True)
    """))
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import json, os, signal, sys
        sys.path.insert(0, {str(ROOT / "benchmarks")!r})
        import swebench_pass_measure as measure
        usage = measure.run_measured([sys.executable, {str(step)!r}], env=os.environ, log=__import__("pathlib").Path({str(tmp_path / "log")!r}))
        print(json.dumps({{"interrupted": usage.interrupted, "returncode": usage.returncode}}))
    """))
    import signal
    import subprocess
    import time

    proc = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    log = tmp_path / "log"
    for _ in range(200):
        if log.exists() and "started" in log.read_text():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert "stopped" in log.read_text() and "ran on" not in log.read_text()
    assert json.loads(out.strip().splitlines()[-1]) == {"interrupted": True, "returncode": 130}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_the_cpu_of_processes_in_a_pid_namespace_is_counted(tmp_path: Path) -> None:
    """bubblewrap with a PID namespace hands none of its sandboxed processes' usage on to rusage:
    the step's own cgroup still counts them."""
    group = measure.CpuCgroup.create()
    if group is None:
        pytest.skip("no writable cgroup here (the report then says its CPU figures lack the tests)")
    group.remove()
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass\n"
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
            sys.executable, "-c", burn]
    usage = measure.run_measured(argv, env=os.environ, log=tmp_path / "log")
    assert usage.returncode == 0
    assert usage.cpu_source == "cgroup"
    assert usage.cpu_seconds >= 0.9
    assert usage.rusage_core_seconds < 0.5   # what rusage alone would have said


def test_descendants_follow_parent_links_from_the_root_only() -> None:
    parents = {10: 1, 11: 10, 12: 11, 13: 10, 20: 1, 21: 20}
    assert measure.descendants(10, parents) == {10, 11, 12, 13}


def test_disk_counts_a_hard_linked_file_once_in_the_total_and_skips_what_it_is_told(tmp_path: Path) -> None:
    cache, envs = tmp_path / "cache", tmp_path / "envs"
    (envs / "layers").mkdir(parents=True)
    cache.mkdir()
    (cache / "wheel").write_bytes(b"x" * 65536)
    os.link(cache / "wheel", envs / "wheel")
    (envs / "layers" / "big").write_bytes(b"y" * 65536)
    use = measure.disk_use([("envs", envs, [envs / "layers"]), ("cache", cache, [])])
    one = (cache / "wheel").stat().st_blocks * 512
    assert use.folders["envs"] == use.folders["cache"] == one
    assert use.total == one


def _rows_data() -> list[tuple[str, list[dict]]]:
    row = {"instance_id": "o__a-1", "repo": "o/a", "base_commit": "x", "FAIL_TO_PASS": '["t1"]',
           "PASS_TO_PASS": '["t2", "t3"]'}
    return [("lite", [row, {**row, "instance_id": "o__a-2"}]),
            ("verified", [{**row, "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["t2"]},
                          {**row, "instance_id": "o__a-2", "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["t2", "t3"]}])]


def test_an_id_in_two_datasets_runs_once_with_the_first_row_and_a_difference_is_noted() -> None:
    rows = bench.merge_rows(_rows_data())
    assert [(r.instance_id, r.datasets) for r in rows] == [("o__a-1", ["lite", "verified"]),
                                                             ("o__a-2", ["lite", "verified"])]
    assert rows[0].data["PASS_TO_PASS"] == '["t2", "t3"]'
    assert rows[0].differs == ["PASS_TO_PASS differs in verified"]
    assert rows[1].differs == []   # the same lists, once as JSON text and once as a list


def test_a_row_is_at_hand_only_when_its_clone_holds_its_base_commit(tmp_path: Path) -> None:
    clone = tmp_path / "clones" / "o__a"
    first = init_repo(clone, {"a.py": "x = 1\n"})
    second = commit_files(clone, {"a.py": "x = 2\n"}, "second")
    rows = [bench.Row({"instance_id": f"o__a-{i}", "repo": "o/a", "base_commit": sha})
            for i, sha in enumerate([first, "0" * 40, second])]
    rows.append(bench.Row({"instance_id": "p__b-1", "repo": "p/b", "base_commit": first}))
    bench.mark_at_hand(rows, tmp_path / "clones")
    assert [r.at_hand for r in rows] == [True, False, True, False]
    chosen = bench.choose(rows, [], [], limit=None, per_repo=1)
    assert [r.instance_id for r in chosen] == ["o__a-0"]


def _args(tmp_path: Path, home: Path, *more: str):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"instance_id": "o__a-1", "repo": "o/a", "base_commit": "x"}) + "\n")
    (tmp_path / "clones").mkdir(exist_ok=True)
    return bench.parse_args(["--dataset", str(data), "--repos", str(tmp_path / "clones"),
                             "--output", str(tmp_path / "out"), "--home", str(home), *more])


def test_a_cold_pass_refuses_a_home_that_already_holds_a_cache(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "envs").mkdir(parents=True)
    args = _args(tmp_path, home)
    with pytest.raises(bench.PassRefused, match=r"--home .* already holds a cache"):
        bench.load_state(args, ["o__a-1"], {"commit": "abc"})


def test_a_pass_continues_only_from_the_commit_it_started_at(tmp_path: Path) -> None:
    args = _args(tmp_path, tmp_path / "home")
    args.output.mkdir()
    state = bench.load_state(args, ["o__a-1"], {"commit": "a" * 40})
    bench.save_state(args, state)
    assert bench.load_state(args, ["o__a-1"], {"commit": "a" * 40})["ids"] == ["o__a-1"]
    with pytest.raises(bench.PassRefused, match="started at commit aaaaaaaaaaaa"):
        bench.load_state(args, ["o__a-1"], {"commit": "b" * 40})
    with pytest.raises(bench.PassRefused, match="other rows"):
        bench.load_state(args, ["o__a-2"], {"commit": "a" * 40})


def test_the_command_line_refuses_a_missing_dataset_in_one_line(tmp_path: Path, capsys) -> None:
    code = bench.main(["--dataset", str(tmp_path / "none.jsonl"), "--repos", str(tmp_path),
                       "--output", str(tmp_path / "o"), "--home", str(tmp_path / "h")])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: --dataset {tmp_path / 'none.jsonl'}: no such file"]


def test_a_step_that_eval_refuses_says_evals_error_and_hint_where_the_pass_is_watched(tmp_path: Path) -> None:
    log = tmp_path / "environments.log"
    log.write_text("$ nice -n 10 issuebench eval --dataset tasks.jsonl ...\n"
                   "error: 26 of the 65 task(s) need Debian packages that are not installed: libeccodes0 "
                   "(pydata__xarray-4493 and 25 more)\n"
                   "  hint: install them as root: apt-get install -y --no-install-recommends libeccodes0 "
                   "(or rerun with --install-system-deps, as root); nothing was run\n")
    said = bench.eval_complaint(log)
    assert said[0].startswith("error: 26 of the 65 task(s) need Debian packages") and "libeccodes0" in said[0]
    assert said[1].startswith("hint: install them as root") and len(said) == 2
    assert bench.eval_complaint(tmp_path / "missing.log") == []
