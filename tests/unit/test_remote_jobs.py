"""The driver side of agent and synth on a remote executor, without a cluster: an executor that
draws records one at a time (as Ray does) and hands back scripted results. What is checked is what
the driver owns: the total cost limit, what is written, what a lost worker leaves for a rerun."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Iterator, Sequence

from issuebench.agent import RunFolder, Trajectory, run_agent
from issuebench.executors import Failure
from issuebench.executors.gate import Gate
from issuebench.harness import EvalOptions, build_context
from issuebench.llm import OpenAIModel, ReplayModel, Usage
from issuebench.models import Task
from issuebench.synth.output import CandidateLog


def task(i: int) -> Task:
    return Task(instance_id=f"acme__calc-{i}", repo="acme/calc", base_commit="0" * 40, patch="",
                test_patch="", problem_statement="fix it", FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[])


class OneSlot:
    """Draws its next record only after the driver handled the last result; every call pickles."""

    name = "fake"
    workers = 1

    def __init__(self, results: dict[str, object]) -> None:
        self.results = results
        self.shipped: list[str] = []

    def map_unordered(self, fn: Callable, records: Sequence[Task]) -> Iterator[tuple[int, object]]:
        for index, record in enumerate(records):
            pickle.loads(pickle.dumps((fn, record)))  # what Ray would have to ship
            self.shipped.append(record.instance_id)
            yield index, self.results[record.instance_id]

    def close(self) -> None:
        pass


def submitted(i: int, cost: float) -> Trajectory:
    return Trajectory(f"acme__calc-{i}", "replay", exit_status="submitted", reason="the agent submitted", steps=2,
                      usage=Usage(10, 2, 2, cost), patch=f"diff --git a/f{i} b/f{i}\n")


def test_gate_stops_drawing_when_told_and_counts_what_it_drew():
    state = {"stop": False}
    gate = Gate([1, 2, 3, 4], lambda: state["stop"])
    drawn = []
    for record in gate:
        drawn.append(record)
        state["stop"] = record == 2
    assert drawn == [1, 2] and gate.drawn == 2 and len(gate) == 4 and gate[3] == 4


def test_remote_agent_stops_shipping_at_the_total_cost_limit_and_writes_every_instance(tmp_path):
    tasks = [task(i) for i in range(4)]
    ctx = build_context(EvalOptions(output_dir=tmp_path / "eval", run_id="agent", no_sandbox=True))
    pool = OneSlot({"acme__calc-0": submitted(0, 0.03), "acme__calc-1": submitted(1, 0.03),
                    "acme__calc-2": submitted(2, 0.03), "acme__calc-3": submitted(3, 0.03)})
    result = run_agent(tasks, ReplayModel({"default": ["x"]}), ctx, tmp_path / "run", total_cost_limit=0.05,
                       executor=pool)
    # 0.03 < 0.05 lets the second start; after it the driver's ledger holds 0.06 and ships nothing more.
    assert pool.shipped == ["acme__calc-0", "acme__calc-1"]
    assert [r["exit_status"] for r in result.trajectories] == ["submitted", "submitted", "not_started", "not_started"]
    assert result.spent == 0.06
    folder = RunFolder(tmp_path / "run")
    assert folder.predicted_ids() == {"acme__calc-0", "acme__calc-1"}
    assert folder.read_trajectory("acme__calc-3")["exit_status"] == "not_started"


def test_a_lost_worker_is_an_infrastructure_status_and_a_rerun_retries_only_it(tmp_path):
    tasks = [task(i) for i in range(2)]
    ctx = build_context(EvalOptions(output_dir=tmp_path / "eval", run_id="agent", no_sandbox=True))
    model = ReplayModel({"default": ["x"]})
    lost = Failure("worker_lost", "WorkerCrashedError after 2 retries: died")
    first = run_agent(tasks, model, ctx, tmp_path / "run",
                      executor=OneSlot({"acme__calc-0": submitted(0, 0.01), "acme__calc-1": lost}))
    assert [r["exit_status"] for r in first.trajectories] == ["submitted", "worker_lost"]
    assert "after 2 retries" in first.trajectories[1]["reason"]
    assert RunFolder(tmp_path / "run").predicted_ids() == {"acme__calc-0"}  # no prediction for a lost one
    again = OneSlot({"acme__calc-1": submitted(1, 0.01)})
    second = run_agent(tasks, model, ctx, tmp_path / "run", executor=again)
    assert again.shipped == ["acme__calc-1"] and second.skipped == ["acme__calc-0"]
    assert RunFolder(tmp_path / "run").predicted_ids() == {"acme__calc-0", "acme__calc-1"}


def test_models_travel_without_their_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-driver-secret")
    model = OpenAIModel("replay", base_url="http://127.0.0.1:9/v1", timeout=7)
    blob = pickle.dumps(model)
    assert b"sk-driver-secret" not in blob
    monkeypatch.setenv("OPENAI_API_KEY", "sk-worker")
    copy = pickle.loads(blob)
    assert (copy.name, copy.base_url, copy._timeout) == ("replay", "http://127.0.0.1:9/v1", 7)
    assert copy._client.api_key == "sk-worker"  # read again where it runs
    replay = pickle.loads(pickle.dumps(ReplayModel({"default": ["an answer"]})))
    assert replay.query([{"role": "user", "content": "hi"}]).content == "an answer"


def test_candidates_failed_by_the_machinery_are_decided_again_on_resume(tmp_path):
    path = tmp_path / "candidates.jsonl"
    log = CandidateLog(path)
    log.add({"id": "aaa", "generator": "op_flip", "status": "kept", "seconds": 1.0})
    log.add({"id": "bbb", "generator": "op_flip", "status": "error", "seconds": 0.0, "reason": "worker_lost",
             "retry": True})
    log.add({"id": "ccc", "generator": "const", "status": "error", "seconds": 0.0, "reason": "raised"})
    assert set(log.done) == {"aaa", "bbb", "ccc"}  # this run counts it in its yield table
    assert set(CandidateLog(path).done) == {"aaa", "ccc"}  # a rerun validates bbb again
    assert len(path.read_text().splitlines()) == 3 and json.loads(path.read_text().splitlines()[1])["retry"]
