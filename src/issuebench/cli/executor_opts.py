"""The `--executor local|ray` and `--ray-address` options every fanning-out command shares."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import typer

from issuebench.executors import Executor, get_executor


def executor_option() -> str:
    return typer.Option("local", "--executor", help="'local' (a pool on this machine) or 'ray' (a Ray cluster; "
                        "needs `pip install issuebench\\[ray]`).")


def ray_address_option() -> str | None:
    return typer.Option(None, "--ray-address", help="Ray head as host:port, or 'auto' (default with "
                        "--executor ray: start a Ray instance on this machine for the run).")


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
