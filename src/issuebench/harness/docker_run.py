"""`eval --backend docker`: an instance's tests in the reference's published image."""

from __future__ import annotations

import secrets
import time

from issuebench.harness import commands, docker_backend
from issuebench.harness.context import EvalContext
from issuebench.harness.runlog import InstanceLog
from issuebench.harness.test_run import TestRun, parse_run
from issuebench.models import EnvSpec, InstanceStatus, PatchStatus, Task

_DOCKER_STATUS = {"apply_failed": InstanceStatus.APPLY_FAILED, "timeout": InstanceStatus.TIMEOUT,
                  "memory_limit": InstanceStatus.MEMORY_LIMIT, "docker_failed": InstanceStatus.SANDBOX_FAILED}


def run_in_docker_backend(task: Task, model_patch: str | None, ctx: EvalContext, spec: EnvSpec | None,
                          log: InstanceLog) -> TestRun:
    """The same instance in the reference's published image: only where the tests run changes."""

    spec = spec or EnvSpec(test_cmd="pytest -rA")
    nonce = secrets.token_hex(16)
    run = TestRun(InstanceStatus.ERROR, command=commands.test_command(spec, task.test_patch))
    run.script = commands.eval_script(spec, task.test_patch, nonce)
    log.info(f"docker image {task.image or docker_backend.image_name(task)}")
    t0 = time.monotonic()
    # Called through the module, so a test can put a stand-in for the engine in its place.
    run.output, status = docker_backend.run_in_docker(task, model_patch, run.command, nonce, ctx.limits)
    run.durations["tests"] = time.monotonic() - t0
    if model_patch and model_patch.strip():
        applied = status != "apply_failed"
        run.patch_status = PatchStatus.APPLIED if applied else PatchStatus.DOES_NOT_APPLY
        run.apply_method = "docker: git apply / patch fallbacks" if applied else None
    if status != "ok":
        run.status, run.reason = _DOCKER_STATUS.get(status, InstanceStatus.ERROR), f"docker backend: {status}"
        return run
    return parse_run(task, spec, run, nonce, None)


