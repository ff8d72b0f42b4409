"""The `--executor local|ray` and `--ray-address` options every fanning-out command shares."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from issuebench.cli.options import option
from issuebench.executors import Executor, get_executor


def executor_option() -> str:
    return option("--executor")


def ray_address_option() -> str | None:
    return option("--ray-address")


@contextlib.contextmanager
def opened_executor(name: str, address: str | None, workers: int | None,
                    forward_env: Sequence[str] = ()) -> Iterator[Executor]:
    """get_executor, closed (a Ray instance started for the run shut down) however the command ends.
    forward_env: names of variables the Ray workers get from the driver (agent: the model's key)."""
    executor = get_executor(name, address, workers, forward_env=forward_env)
    try:
        yield executor
    finally:
        executor.close()
