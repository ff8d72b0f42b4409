"""validate on an executor: each task is a record, validated (before/after runs) on one worker;
the verdicts come back to the driver, which writes the task files as it does locally."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from issuebench.executors.base import Executor, Failure
from issuebench.models import Task


def _validate_one(task: Task, *, runner: Callable, repeats: int) -> object:
    from issuebench.collect.validate import validate_task

    return validate_task(task, runner, repeats)


def validate_on(executor: Executor, tasks: Sequence[Task], runner: Callable, repeats: int,
                on_verdict: Callable | None = None) -> list:
    """Verdicts in the tasks' order; `runner` must pickle (validate.HarnessRunner does)."""
    from issuebench.collect import pipeline as P
    from issuebench.collect.validate import Verdict

    verdicts: list[Verdict | None] = [None] * len(tasks)
    for index, result in executor.map_unordered(partial(_validate_one, runner=runner, repeats=repeats), tasks):
        if isinstance(result, Failure):  # one lost worker or crashing task never stops the run
            result = Verdict(tasks[index], kept=False, reason=P.RUN_FAILED, detail=f"{result.kind}: {result.reason}")
        verdicts[index] = result
        if on_verdict:
            on_verdict(result)
    return [v for v in verdicts if v is not None]
