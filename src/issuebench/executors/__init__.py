"""Where records run: `local` (a pool on this machine, the default) or `ray` (a Ray cluster).

Every command that fans out (eval, validate, synth, agent, infer, the test-strength passes) goes
through one path, `drive`, on an executor chosen here (or a LocalExecutor it makes itself):

    executor = get_executor(name, address, workers)     # name: "local" | "ray"
    drive(executor, fn, records, handle)                 # handle(index, result or Failure)
    executor.close()

`fn` and the records must pickle (module-level functions, dataclasses, pydantic models): with
Ray they travel to other machines. The driver writes every file; workers only compute.
"""

from __future__ import annotations

from collections.abc import Sequence

from issuebench.errors import IssuebenchError
from issuebench.executors.base import DEFAULT_RETRIES, Executor, Failure, Interrupted, drive, run_one
from issuebench.executors.gate import Gate
from issuebench.executors.local import LocalExecutor
from issuebench.executors.ray_executor import RayExecutor

EXECUTORS = ("local", "ray")


def get_executor(name: str = "local", address: str | None = None, workers: int | None = None,
                 retries: int = DEFAULT_RETRIES, forward_env: Sequence[str] = ()) -> Executor:
    """The one place an executor is chosen. Raises IssuebenchError for an unknown name, a missing
    `ray` extra (message: the pip command) or a cluster that cannot be reached.

    workers: records in flight (default: this machine's cores, or the Ray cluster's CPUs);
    retries: how often Ray resends a record whose worker died; forward_env: names of environment
    variables the Ray workers get from the driver (ISSUEBENCH_HOME always is, when set)."""
    if name == "local":
        if address:
            raise IssuebenchError("--ray-address needs --executor ray", hint="add --executor ray")
        return LocalExecutor(workers)
    if name == "ray":

        return RayExecutor(address=address, workers=workers, retries=retries, forward_env=forward_env)
    raise IssuebenchError(f"unknown executor '{name}'", hint="use --executor local or --executor ray")

__all__ = [
    "DEFAULT_RETRIES",
    "EXECUTORS",
    "Executor",
    "Failure",
    "Gate",
    "Interrupted",
    "LocalExecutor",
    "drive",
    "get_executor",
    "run_one",
]
