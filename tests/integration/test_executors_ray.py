"""eval on a real local Ray cluster (a head and a second node, each a raylet with its own worker
processes): the verdicts equal the local executor's, a worker killed mid-record is retried or the
record is marked worker_lost, and a rerun resumes like a local one."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install issuebench[ray])")

from issuebench.datasets import gold_predictions  # noqa: E402
from issuebench.demo import demo_predictions, demo_repos_dir, demo_tasks  # noqa: E402
from issuebench.executors import Failure, get_executor  # noqa: E402
from issuebench.harness import EvalOptions, build_context, run_evaluation  # noqa: E402
from issuebench.models import InstanceStatus  # noqa: E402
from tests.interruptible import interruptible  # noqa: E402

pytestmark = pytest.mark.xdist_group("ray-cluster")

RAY_TASK = "ray::_call"  # the title Ray gives a worker process while it runs one of our records


@pytest.fixture(scope="module", autouse=True)
def ray_temp_dir():
    """Ray's sessions (logs, sockets) in a folder of this module's own, removed after it, instead of
    the machine's shared temporary folder. Short: Ray's socket paths must fit a Unix socket's name."""
    path = tempfile.mkdtemp(prefix="ib-ray-")
    previous = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = path
    yield Path(path)
    if previous is None:
        os.environ.pop("RAY_TMPDIR", None)
    else:
        os.environ["RAY_TMPDIR"] = previous
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(ray_temp_dir):
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1)  # a second raylet: records run in two node's worker processes
    yield c
    if ray.is_initialized():
        ray.shutdown()
    c.shutdown()


def _cli(*args: str) -> list[str]:
    return interruptible("-m", "issuebench", *args)  # a driver the tests stop with SIGINT


def _results(out: Path, run_id: str, model: str) -> dict[str, dict]:
    base = out / "logs" / "run_evaluation" / run_id / model
    return {d.name: json.loads((d / "result.json").read_text()) for d in base.iterdir()}


def _slow_dataset(path: Path, n: int, sleep: int = 1) -> list:
    """Demo tasks whose tests wait first: a worker can be killed while it runs one."""
    tasks = [t.model_copy(update={"env": t.env.model_copy(update={"pre_test": [f"sleep {sleep}"]})})
             for t in demo_tasks()[:n]]
    path.write_text("".join(json.dumps(t.model_dump(mode="json", exclude_none=True)) + "\n" for t in tasks))
    return tasks


def _raylets(cluster) -> set[int]:
    """The pids of this cluster's raylets: the parents of its worker processes."""
    return {info.process.pid for node in cluster.list_all_nodes()
            for info in node.all_processes.get("raylet", [])}


def _worker_mid_record(sleep: int, raylets: set[int]) -> int | None:
    """This cluster's Ray worker running one of our records right now, or None.

    A record's tests start with `sleep N` inside the sandbox, a child of the worker that runs the
    record: while that sleep lives, its worker cannot have finished the record. Matching the process
    title alone was not enough on a loaded machine (a kill could land after the result went back),
    and the worker must be a child of this cluster's raylets: another suite on the same machine runs
    the same records on its own cluster, and killing its worker loses nothing here."""
    import psutil

    for proc in psutil.process_iter(["cmdline"]):
        if (proc.info["cmdline"] or []) != ["sleep", str(sleep)]:
            continue
        try:
            for parent in proc.parents():
                if " ".join(parent.cmdline()).startswith(RAY_TASK) and parent.ppid() in raylets:
                    return parent.pid
        except psutil.Error:
            continue
    return None


def _signal_first_record(stop: threading.Event, sleep: int, raylets: set[int],
                         target: Callable[[int], int | None], signum: int) -> list[int]:
    """Send `signum` to `target(worker)` for the first of this cluster's workers seen in the middle
    of a record (tests of `sleep` seconds); the worker's pid."""
    while not stop.is_set():
        pid = _worker_mid_record(sleep, raylets)
        victim = target(pid) if pid is not None else None
        if victim is not None:
            os.kill(victim, signum)
            return [pid]
        stop.wait(0.05)
    return []


def _kill_first_record_worker(stop: threading.Event, sleep: int, raylets: set[int]) -> list[int]:
    """SIGKILL the first of this cluster's workers seen in the middle of a record; its pid."""
    return _signal_first_record(stop, sleep, raylets, lambda worker: worker, signal.SIGKILL)


def _in_background(fn, *args):
    box: list = []
    thread = threading.Thread(target=lambda: box.extend(fn(*args)), daemon=True)
    thread.start()
    return thread, box


def test_eval_without_an_address_starts_a_ray_instance_for_the_run_and_stops_it(tmp_path):
    """First in the module, before the shared cluster exists: the raylet seen is the run's own."""
    import psutil

    def raylets() -> set[int]:
        return {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == "raylet"}

    def own_raylets(driver: int) -> set[int]:
        """Raylets started under the run's own process (not another test's cluster)."""
        out = set()
        for pid in raylets() - before:
            try:
                if driver in {p.pid for p in psutil.Process(pid).parents()}:
                    out.add(pid)
            except psutil.Error:
                continue
        return out

    before = raylets()
    seen: set[int] = set()
    proc = subprocess.Popen(_cli("eval", "-d", "demo", "-p", "gold", "-o", str(tmp_path), "--run-id", "own",
                                 "-i", *[t.instance_id for t in demo_tasks()[:3]], "--executor", "ray", "-w", "2"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None:
        seen |= own_raylets(proc.pid)
        threading.Event().wait(0.1)
    _, err = proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    assert seen, "no Ray instance was started for the run"
    deadline = time.monotonic() + 30   # a raylet takes a moment to exit after its driver says stop
    while seen & raylets() and time.monotonic() < deadline:
        threading.Event().wait(0.2)
    assert not (seen & raylets())  # and it was stopped with the run
    results = _results(tmp_path, "own", "gold")
    assert len(results) == 3 and {r["status"] for r in results.values()} == {"resolved"}


def test_records_that_raise_or_kill_their_worker_come_back_as_failures(cluster, monkeypatch):
    # Set after the cluster started, so only forwarding can bring it to the workers.
    monkeypatch.setenv("IB_FORWARDED", "from-the-driver")

    def record(x: int) -> object:
        if x == 1:
            os._exit(1)  # kills the worker process on every attempt
        if x == 2:
            raise ValueError("bad record")
        return os.environ.get("IB_FORWARDED") if x == 3 else x * 10

    with get_executor("ray", cluster.address, 2, retries=1, forward_env=["IB_FORWARDED"]) as ex:
        got = dict(ex.map_unordered(record, [0, 1, 2, 3]))
    assert got[0] == 0 and got[3] == "from-the-driver"
    assert isinstance(got[1], Failure) and got[1].kind == "worker_lost"  # after 1 retry
    assert "after 1 retries" in got[1].reason
    assert got[2] == Failure("error", "ValueError: bad record")  # not retried: it would raise again


def test_eval_demo_through_the_cli_on_ray_gives_the_local_verdicts(cluster, tmp_path):
    tasks = demo_tasks()
    local = run_evaluation(tasks, demo_predictions("mixed"),
                           build_context(EvalOptions(output_dir=tmp_path / "local", run_id="r",
                                                     repos_dir=demo_repos_dir(), python_fallback="nearest",
                                                     timeout=120)), workers=2)
    proc = subprocess.run(_cli("eval", "-d", "demo", "-p", "demo:mixed", "-o", str(tmp_path / "ray"),
                               "--run-id", "r", "--executor", "ray", "--ray-address", cluster.address),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    on_ray = _results(tmp_path / "ray", "r", "demo-mixed")
    assert len(on_ray) == len(tasks)
    for report in local.reports:
        remote = on_ray[report.instance_id]
        assert remote["status"] == report.status.value, report.instance_id
        assert remote["tests_status"] == (report.tests_status.model_dump(mode="json") if report.tests_status else None)
    # The driver wrote every artifact the workers produced, in the reference's layout.
    inst = tmp_path / "ray" / "logs" / "run_evaluation" / "r" / "demo-mixed" / tasks[0].instance_id
    for name in ("patch.diff", "eval.sh", "test_output.txt", "run_instance.log", "report.json"):
        assert (inst / name).is_file(), name
    workers = {line.split("ran on ", 1)[1] for d in inst.parent.iterdir()
               for line in (d / "run_instance.log").read_text().splitlines() if "ran on " in line}
    assert len(workers) >= 2, workers  # both nodes' worker processes took records
    assert json.loads((tmp_path / "ray" / "demo-mixed.r.json").read_text())["total_instances"] == len(tasks)


def test_a_worker_killed_mid_record_is_retried_and_the_run_completes(cluster, tmp_path):
    tasks = _slow_dataset(tmp_path / "slow.jsonl", 4, sleep=2)
    stop = threading.Event()
    killer, killed = _in_background(_kill_first_record_worker, stop, 2, _raylets(cluster))
    proc = subprocess.run(_cli("eval", "-d", str(tmp_path / "slow.jsonl"), "-p", "gold", "-o", str(tmp_path),
                               "--run-id", "k", "--repos", str(demo_repos_dir()), "--python-fallback", "nearest",
                               "--executor", "ray", "--ray-address", cluster.address, "-w", "2"),
                          capture_output=True, text=True, timeout=600)
    stop.set()
    killer.join()
    assert killed, "no worker was seen running a record"
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = _results(tmp_path, "k", "gold")
    assert {r["status"] for r in results.values()} == {"resolved"} and len(results) == len(tasks)


def test_a_worker_lost_beyond_the_retries_is_marked_and_a_rerun_resumes(cluster, tmp_path):
    tasks = _slow_dataset(tmp_path / "slow.jsonl", 3, sleep=4)
    gold = gold_predictions(tasks)

    def ctx():
        return build_context(EvalOptions(output_dir=tmp_path, run_id="lost", repos_dir=demo_repos_dir(),
                                         python_fallback="nearest", timeout=120))

    stop = threading.Event()
    killer, killed = _in_background(_kill_first_record_worker, stop, 4, _raylets(cluster))
    with get_executor("ray", cluster.address, 2, retries=0) as ex:
        first = run_evaluation(tasks, gold, ctx(), executor=ex)
    stop.set()
    killer.join()
    assert killed, "no worker was seen running a record"
    statuses = {r.instance_id: r.status for r in first.reports}
    lost = [i for i, s in statuses.items() if s is InstanceStatus.WORKER_LOST]
    # One kill loses its record; on a loaded machine (two suites on two cores) the record sent next
    # can be lost too, when its new worker does not start in Ray's time: also beyond the retries, so
    # also marked. What must hold: the lost are marked, the rest resolved, and the rerun resumes.
    assert 1 <= len(lost) < len(tasks) and set(statuses.values()) == {InstanceStatus.RESOLVED,
                                                                      InstanceStatus.WORKER_LOST}
    assert all("worker_lost" in r.reason for r in first.reports if r.instance_id in lost)
    summary = json.loads((tmp_path / "gold.lost.json").read_text())
    assert summary["resolved_instances"] == len(tasks) - len(lost) and set(lost) <= set(summary["error_ids"])

    with get_executor("ray", cluster.address, 2) as ex:  # the rerun: same run id, nothing killed
        again = run_evaluation(tasks, gold, ctx(), executor=ex)
    assert {r.status for r in again.reports} == {InstanceStatus.RESOLVED}
    base = tmp_path / "logs" / "run_evaluation" / "lost" / "gold"
    for task in tasks:  # finished work was reused, the lost instance ran again
        log = (base / task.instance_id / "run_instance.log").read_text()
        assert ("result reused" in log) == (task.instance_id not in lost), task.instance_id


def _stop_first_record_sandbox(stop: threading.Event, sleep: int, raylets: set[int]) -> list[int]:
    """SIGTERM, from outside, the sandbox of the first of this cluster's records seen mid-run (a
    node's processes stopped under a record); the pid of the worker that ran it."""
    from tests.integration.test_stopped_from_outside import bwrap_below

    def outermost_bwrap(worker: int) -> int | None:  # the one the record started
        found = bwrap_below(worker)
        return found[0] if found else None

    return _signal_first_record(stop, sleep, raylets, outermost_bwrap, signal.SIGTERM)


@pytest.mark.parametrize("retries", [0, 1])
def test_a_sandbox_stopped_from_outside_on_a_worker_is_never_graded_but_lost_or_retried(cluster, tmp_path, retries):
    """A stop from outside says nothing of the patch: no `error` or `sandbox_failed` verdict. Ray
    sends the record again like one whose worker died; beyond the retries it is worker_lost."""
    tasks = _slow_dataset(tmp_path / "slow.jsonl", 2, sleep=3)
    stop = threading.Event()
    killer, killed = _in_background(_stop_first_record_sandbox, stop, 3, _raylets(cluster))
    with get_executor("ray", cluster.address, 2, retries=retries) as ex:
        run = run_evaluation(tasks, gold_predictions(tasks),
                             build_context(EvalOptions(output_dir=tmp_path, run_id="stopped", timeout=120,
                                                       repos_dir=demo_repos_dir(), python_fallback="nearest")),
                             executor=ex)
    stop.set()
    killer.join()
    assert killed, "no sandbox was seen running a record"
    statuses = sorted(r.status.value for r in run.reports)
    if retries:
        assert statuses == ["resolved", "resolved"]  # the stopped record ran again, and was graded
    else:
        assert statuses == ["resolved", "worker_lost"]
        [lost] = [r for r in run.reports if r.status is InstanceStatus.WORKER_LOST]
        assert "stopped from outside by SIGTERM" in lost.reason, lost.reason


def test_validate_on_ray_keeps_the_same_tasks_with_the_same_lists(cluster, tmp_path):
    from issuebench.collect.validation import harness_runner, validate

    tasks = demo_tasks()[:3]
    runner, _ = harness_runner(repos_dir=demo_repos_dir(), work_dir=tmp_path, timeout=120)
    local = validate(tasks, runner, repeats=1, workers=2)
    with get_executor("ray", cluster.address, 2) as ex:
        seen: list[str] = []
        remote = validate(tasks, runner, repeats=1, executor=ex, on_verdict=lambda v: seen.append(v.task.instance_id))
    assert sorted(seen) == sorted(t.instance_id for t in tasks)  # streamed back one by one
    assert [v.kept for v in remote.verdicts] == [v.kept for v in local.verdicts] == [True] * len(tasks)
    for mine, theirs in zip(remote.verdicts, local.verdicts, strict=True):
        assert (mine.task.FAIL_TO_PASS, mine.task.PASS_TO_PASS) == (theirs.task.FAIL_TO_PASS, theirs.task.PASS_TO_PASS)


def test_an_interrupted_or_killed_driver_loses_no_finished_instance(cluster, tmp_path):
    import time

    # Records of a few seconds each, so a signal lands between two results even on a loaded machine.
    tasks = _slow_dataset(tmp_path / "slow.jsonl", 5, sleep=3)
    args = _cli("eval", "-d", str(tmp_path / "slow.jsonl"), "-p", "gold", "-o", str(tmp_path), "--run-id", "d",
                "--repos", str(demo_repos_dir()), "--python-fallback", "nearest",
                "--executor", "ray", "--ray-address", cluster.address, "-w", "1")
    base = tmp_path / "logs" / "run_evaluation" / "d" / "gold"

    def finished() -> set[str]:
        # An instance writes into a hidden `.<id>.partial` folder until it is done: only named ones count.
        return {p.parent.name for p in base.glob("*/result.json") if not p.parent.name.startswith(".")}

    def stop_after_one_more_result(sig: int) -> tuple[subprocess.Popen, set[str]]:
        before = finished()
        driver = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while driver.poll() is None and len(finished()) <= len(before):
            time.sleep(0.05)  # waits for an event (one more result written), asserts nothing about time
        driver.send_signal(sig)
        driver.wait(timeout=120)
        done = finished()
        assert before < done and len(done) < len(tasks), f"the driver was not stopped mid-run: {done}"
        return driver, done

    # Ctrl-C: the records in flight are cancelled on the cluster, the run says how to resume.
    driver, _ = stop_after_one_more_result(signal.SIGINT)
    assert driver.returncode == 130 and "interrupted; rerun to resume" in driver.stderr.read()
    # Killed outright: whatever had arrived is already on disk.
    _, done_before = stop_after_one_more_result(signal.SIGKILL)

    again = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    results = _results(tmp_path, "d", "gold")
    assert {r["status"] for r in results.values()} == {"resolved"} and len(results) == len(tasks)
    for instance_id in done_before:  # finished before the kill: reused, not run again
        assert "result reused" in (base / instance_id / "run_instance.log").read_text()



def _synth_args(src: Path, recipe: Path, out: Path, *extra: str) -> list[str]:
    return ["synth", str(src), "--recipe", str(recipe), "-o", str(out), "--name", "acme/calc",
            "--generators", "op_flip,remove_return,const", "--limit", "6", "--seed", "1", *extra]


def _kept(out: Path) -> dict[str, tuple]:
    rows = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    return {r["instance_id"]: (r["base_commit"], r["patch"], r["FAIL_TO_PASS"], r["PASS_TO_PASS"]) for r in rows}


@pytest.mark.slow
def test_synth_on_ray_keeps_the_local_tasks_and_a_rerun_resumes(cluster, tmp_path):
    from typer.testing import CliRunner

    from issuebench.cli.main import app
    from tests.gitrepo import init_repo
    from tests.integration.test_synth_real_sandbox import CORE, TESTS_CORE, TESTS_TEXT, TEXT

    src = tmp_path / "calc"
    init_repo(src, {"calc/__init__.py": "", "calc/core.py": CORE, "calc/text.py": TEXT,
                    "tests/test_core.py": TESTS_CORE, "tests/test_text.py": TESTS_TEXT}, date="2024-01-02T00:00:00Z")
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(f'python = "{sys.version_info.major}.{sys.version_info.minor}"\npackages = ["pytest"]\n'
                      'exclude_newer_source = "none"\ntest_cmd = "python -m pytest -rA"\n')
    local = CliRunner().invoke(app, _synth_args(src, recipe, tmp_path / "local"))
    assert local.exit_code == 0, local.output
    on_ray = _cli(*_synth_args(src, recipe, tmp_path / "ray", "--executor", "ray", "--ray-address", cluster.address,
                               "-w", "2"))
    proc = subprocess.run(on_ray, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    kept = _kept(tmp_path / "local")
    assert kept and _kept(tmp_path / "ray") == kept  # same ids, broken commits, fixes and test lists

    def decided(out: Path) -> dict[str, str]:
        return {r["id"]: r["status"] for r in map(json.loads, (out / "candidates.jsonl").read_text().splitlines())}

    assert decided(tmp_path / "ray") == decided(tmp_path / "local")
    validated = [r for r in map(json.loads, (tmp_path / "ray" / "candidates.jsonl").read_text().splitlines())
                 if r.get("runs")]
    assert len({r["worker"] for r in validated}) >= 2  # both nodes' worker processes validated candidates
    lines = (tmp_path / "ray" / "candidates.jsonl").read_text()
    again = subprocess.run(on_ray, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert (tmp_path / "ray" / "candidates.jsonl").read_text() == lines  # resumed: nothing validated again
    assert _kept(tmp_path / "ray") == kept


def test_agent_on_ray_writes_the_local_preds_and_trajectories_within_the_total_cost_limit(cluster, tmp_path):
    from issuebench.agent import AgentConfig, run_agent
    from issuebench.llm import LoopbackServer, OpenAIModel, ReplayModel, solve_script

    tasks = demo_tasks()[:3]
    script = solve_script(tasks)  # every call costs $0.01 at the replay price: 4 calls, $0.04 a task
    for conv in script["conversations"]:
        conv["answers"] = [{"content": a, "prompt_tokens": 10_000, "completion_tokens": 0} for a in conv["answers"]]
    with LoopbackServer(ReplayModel(script)) as server:
        ctx = build_context(EvalOptions(output_dir=tmp_path / "eval", run_id="agent",
                                        repos_dir=demo_repos_dir(), python_fallback="nearest", timeout=60))
        local = run_agent(tasks, OpenAIModel("replay", base_url=server.url), ctx, tmp_path / "local",
                          config=AgentConfig(command_timeout=60.0), total_cost_limit=0.05)
        # The key is set for the driver only: workers of the running cluster get it by forwarding.
        env = {**os.environ, "OPENAI_API_KEY": "sk-forwarded-to-the-workers"}
        proc = subprocess.run(_cli("agent", "-d", "demo", "-i", *[t.instance_id for t in tasks], "-o",
                                   str(tmp_path / "ray"), "--model", "replay", "--base-url", server.url,
                                   "--total-cost-limit", "0.05", "-w", "1", "--executor", "ray", "--ray-address",
                                   cluster.address), env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "sk-forwarded-to-the-workers" in server.api_keys
    # 0.04 < 0.05 lets the second instance start; after it the driver's ledger ships nothing more.
    assert [r["exit_status"] for r in local.trajectories] == ["submitted", "submitted", "not_started"]

    def preds(out: Path) -> list[dict]:
        return sorted(map(json.loads, (out / "preds.jsonl").read_text().splitlines()), key=lambda p: p["instance_id"])

    assert preds(tmp_path / "ray") == preds(tmp_path / "local") and len(preds(tmp_path / "local")) == 2
    def trajectory(side: str, instance_id: str) -> dict:
        traj = json.loads((tmp_path / side / "trajectories" / f"{instance_id}.json").read_text())
        traj.pop("duration")
        assert ("worker" in traj) == (side == "ray" and traj["steps"] > 0)  # it ran on a worker, not here
        traj.pop("worker", None)
        for msg in traj["messages"]:  # the same messages, but for how long the tests took
            msg["content"] = re.sub(r"tests? in [0-9.]+s", "tests in Ts", msg["content"])
        return traj

    for task in tasks:
        assert trajectory("ray", task.instance_id) == trajectory("local", task.instance_id), task.instance_id


@pytest.mark.slow
@pytest.mark.network
def test_eval_on_ray_with_setup_fallback_falls_back_on_the_workers(cluster, tmp_path):
    """The workers make their context from the driver's options: --setup-fallback reaches them
    (their copy of the options once lacked it, and the task stayed unresolved)."""
    from issuebench.sandbox import get_sandbox
    from tests.integration.test_setup_fallback_runs import _candidates, _rows

    try:
        get_sandbox()
    except Exception as exc:
        pytest.skip(f"no sandbox: {exc}")
    repos, candidates = _candidates(tmp_path, "raycalc")  # its recipe cannot import the project
    row = {**_rows(candidates)["acme__raycalc-1"], "FAIL_TO_PASS": ["tests/test_core.py::test_add"],
           "PASS_TO_PASS": ["tests/test_core.py::test_zero"]}
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(row) + "\n")
    result = {}
    for run_id, flags in (("plain", []), ("fallback", ["--setup-fallback"])):
        proc = subprocess.run(_cli("eval", "-d", str(data), "-p", "gold", "--repos", str(repos), "-o",
                                   str(tmp_path / "eval"), "--run-id", run_id, "--executor", "ray",
                                   "--ray-address", cluster.address, *flags),
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-2000:]
        result[run_id] = _results(tmp_path / "eval", run_id, "gold")["acme__raycalc-1"]
    assert result["plain"]["status"] == "unresolved"
    assert result["fallback"]["status"] == "resolved", result["fallback"]
    assert any(n.startswith("setup fallback: recipe set up from ") for n in result["fallback"]["notes"])
