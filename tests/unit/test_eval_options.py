"""A run's options reach every executor worker whole: the context a worker makes from what the
driver shipped (pickled, as Ray does) equals the driver's in every option, and in every setting
the context derives from them. Only where artifacts are written differs (the worker's scratch)."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from issuebench.agent.run import run_agent
from issuebench.harness import EvalContext, EvalOptions, build_context
from issuebench.harness.remote import worker_context
from issuebench.harness.run import _fan_out
from issuebench.llm import ReplayModel
from issuebench.models import Prediction, Task
from issuebench.setup.fallback import fallback_spec

TASK = Task(instance_id="acme__calc-1", repo="acme/calc", base_commit="0" * 40, patch="", test_patch="",
            problem_statement="fix it", FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[])


def every_option_changed(tmp_path: Path) -> EvalOptions:
    """Options with no field at its default, so a field the shipping drops cannot go unseen."""
    return EvalOptions(output_dir=tmp_path / "driver", run_id="r7", timeout=77.0, repos_dir=tmp_path / "repos",
                       recipes_dir=tmp_path / "recipes", no_sandbox=True, strict=True, flaky_reruns=3, allow_clone=False,
                       use_cache=False, python_fallback="nearest", memory_mb=512, backend="docker",
                       keep_workspaces=True, offline=True, setup_fallback=fallback_spec)


class Shipper:
    """An executor that does what Ray does to a call (pickle it, run it elsewhere) up to the
    worker's context, and keeps the contexts it made."""

    name = "shipper"
    workers = 1

    def __init__(self, context_of: Callable[[Callable, object], EvalContext]) -> None:
        self.context_of = context_of
        self.contexts: list[EvalContext] = []

    def map_unordered(self, fn: Callable, records: Sequence) -> Iterator[tuple[int, object]]:
        for record in records:
            shipped_fn, shipped = pickle.loads(pickle.dumps((fn, record)))
            self.contexts.append(self.context_of(shipped_fn, shipped))
        return iter(())  # nothing comes back: only what the worker would start from is checked

    def in_flight(self) -> int:
        return 0

    def close(self) -> None:
        pass


def settings(ctx: EvalContext) -> dict[str, object]:
    """Everything a context holds or derives, but the layout (where artifacts go)."""
    derived = {name: getattr(ctx, name) for name, value in vars(EvalContext).items() if isinstance(value, property)}
    builder = ctx.env_builder
    return {**derived, "limits": ctx.limits, "workspaces_dir": ctx.workspaces_dir,
            "sandbox": type(ctx.sandbox), "builder": (builder.root, builder.python_fallback, builder.offline),
            "run_id": ctx.layout.run_id}


def assert_same_run(worker: EvalContext, driver: EvalContext) -> None:
    # The whole options object: a field added to EvalOptions and lost on the way fails here.
    assert dataclasses.replace(worker.options, output_dir=driver.options.output_dir) == driver.options
    assert settings(worker) == settings(driver)
    assert worker.layout.output_dir != driver.layout.output_dir  # the worker writes to its scratch


def test_every_field_of_the_options_is_set_away_from_its_default(tmp_path):
    options = every_option_changed(tmp_path)
    for field in dataclasses.fields(EvalOptions):
        if field.default is not dataclasses.MISSING:
            assert getattr(options, field.name) != field.default, f"set {field.name} in every_option_changed"


def test_an_eval_record_rebuilds_the_drivers_context_on_a_worker(tmp_path):
    driver = build_context(every_option_changed(tmp_path))
    assert driver.setup_fallback and driver.options.memory_mb == 512 and driver.limits.memory_mb == 512
    pool = Shipper(lambda _fn, record: worker_context(record.options))
    pred = Prediction(instance_id=TASK.instance_id, model_name_or_path="m", model_patch="")
    assert _fan_out([(TASK, pred)], driver, pool, None) == []
    [worker] = pool.contexts
    assert_same_run(worker, driver)


def test_an_agent_call_rebuilds_the_drivers_context_on_a_worker(tmp_path):
    from issuebench.agent.loop import AgentConfig

    driver = build_context(every_option_changed(tmp_path))
    pool = Shipper(lambda fn, _task: worker_context(fn.keywords["options"]))
    run_agent([TASK], ReplayModel({"default": ["x"]}), driver, tmp_path / "agent", config=AgentConfig(),
              executor=pool)
    [worker] = pool.contexts
    assert_same_run(worker, driver)
