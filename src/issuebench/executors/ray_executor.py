"""A Ray cluster (or a Ray instance started for the run): records go to workers, results come back.

Ray retries a record whose worker process or node died (`max_retries`, bounded); after that the
record comes back as Failure("worker_lost"). Exceptions raised by the function itself are not
retried (they would fail again) and come back as Failure("error"), with one exception: a record
whose sandbox was stopped from outside on its node is treated as a lost worker, never a verdict.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from issuebench.errors import IssuebenchError
from issuebench.executors.base import DEFAULT_RETRIES, Failure
from issuebench.interrupts import StopSignal

T = TypeVar("T")
R = TypeVar("R")

INSTALL_HINT = "pip install issuebench[ray]"


class RayMissing(IssuebenchError):
    """`--executor ray` without the optional extra installed."""

    def __init__(self) -> None:
        super().__init__(f"the ray executor needs Ray: {INSTALL_HINT}")


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayMissing() from None
    return ray


class SandboxStopped(Exception):
    """A record's sandbox was stopped from outside on its worker's node (its processes killed, the
    node shutting down): the signal was not the record's doing and says nothing of the patch.

    Locally such a stop stops the run (StopSignal); on a cluster the driver lives on, so the record
    goes the way of a record whose worker died: sent again, and worker_lost after the retries."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)  # the only argument, so that it pickles back to the driver
        self.signum = signum

    def __str__(self) -> str:
        return f"its sandbox was stopped from outside by {signal.Signals(self.signum).name}"


def _call(fn: Callable[[Any], Any], record: Any) -> Any:
    try:
        return fn(record)
    except StopSignal as stop:  # a KeyboardInterrupt, which Ray would take for a cancelled task
        raise SandboxStopped(stop.signum) from None


class RayExecutor:
    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None,
                 retries: int = DEFAULT_RETRIES, forward_env: Sequence[str] = ()) -> None:
        ray = import_ray()
        self._ray = ray
        self._owns_connection = False
        if not ray.is_initialized():
            # No address: a new Ray instance on this machine for this run only ("local"), never one
            # that happens to be running (RAY_ADDRESS, the latest `ray start`): say `auto` for that.
            kwargs: dict[str, Any] = {"address": address or "local", "include_dashboard": False,
                                      "log_to_driver": False, "logging_level": logging.ERROR,
                                      "configure_logging": True}
            if address is None:
                kwargs["num_cpus"] = workers
            # An explicit ISSUEBENCH_HOME is taken to be shared (or meaningful) on every node:
            # workers use the environment and result caches the driver names. Callers add what
            # their records need on the worker (an API key for agent), by name, never by value.
            names = ("ISSUEBENCH_HOME", *forward_env)
            env_vars = {name: os.environ[name] for name in names if name in os.environ}
            if env_vars:
                kwargs["runtime_env"] = {"env_vars": env_vars}
            try:
                ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise IssuebenchError(f"cannot start or reach Ray at {address or 'a new local instance'}: "
                                      f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                                      hint="check --ray-address (host:port of the head, or 'auto')") from None
            self._owns_connection = True
        self.workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.retries = retries
        self._remote = ray.remote(_call).options(num_cpus=1, max_retries=retries,
                                                     retry_exceptions=[SandboxStopped])

    def map_unordered(self, fn: Callable[[T], R], records: Sequence[T]) -> Iterator[tuple[int, R | Failure]]:
        ray = self._ray
        fn_ref = ray.put(fn)  # shipped once, not with every record
        todo = iter(enumerate(records))
        in_flight: dict[Any, int] = {}

        def submit() -> None:
            for index, record in todo:
                in_flight[self._remote.remote(fn_ref, record)] = index
                if len(in_flight) >= self.workers:
                    return

        # At most `workers` records are out at a time: results stream back and are written as they
        # come, so a driver killed half-way has lost only what was in flight.
        submit()
        self._in_flight = in_flight
        try:
            while in_flight:
                [ready], _ = ray.wait(list(in_flight), num_returns=1)
                index = in_flight.pop(ready)
                yield index, self._result(ready)
                submit()
        finally:
            for ref in in_flight:  # an interrupted driver leaves no work running on the cluster
                ray.cancel(ref, force=True)

    def in_flight(self) -> int:
        return len(getattr(self, "_in_flight", ()))

    def _result(self, ref: Any) -> Any:
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the function raised: same outcome on any worker
            cause = exc.cause if exc.cause is not None else exc
            if isinstance(cause, SandboxStopped):
                return Failure("worker_lost", f"{cause}, after {self.retries} retries")
            return Failure("error", f"{type(cause).__name__}: {_first_line(cause)}")
        except ray.exceptions.RayError as exc:  # the worker or its node died, after the retries
            return Failure("worker_lost", f"{type(exc).__name__} after {self.retries} retries: {_first_line(exc)}")

    def close(self) -> None:
        if self._owns_connection:
            self._ray.shutdown()
            self._owns_connection = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
