"""Run one instance in the reference's prebuilt image, through the Docker engine API.

For comparison runs against the official environments (`--backend docker`): the task's `image`
field, or `swebench/sweb.eval.x86_64.<instance id with __ as _1776_>:latest`. The container has no
network, CPU, memory and process limits, labels that identify this process, and auto-removal;
containers left by a killed run are removed at exit, on SIGTERM/SIGINT, or later by label
(`cleanup_containers`).

    run_in_docker(task, model_patch, test_cmd, nonce, limits) -> (output, status)

status: "ok" | "apply_failed" | "timeout" | "memory_limit" | "docker_failed". The markers around
the test output carry the nonce; the test output itself is whatever the tests print.
"""

from __future__ import annotations

import atexit
import io
import os
import shlex
import signal
import tarfile
import threading
import time
from typing import Any

from issuebench.models import Task

LABEL = "issuebench"
LABEL_PID = "issuebench.pid"
TESTBED = "/testbed"          # where the reference's images hold the repository
STAGE = "/issuebench"         # where we put the patches and the script inside the container
APPLY_FAILED_EXIT = 97
# The reference's conda setup in its images.
ACTIVATE = "source /opt/miniconda3/bin/activate && conda activate testbed"

_cleanup_installed = False
_cleanup_lock = threading.Lock()


def image_name(task: Task, namespace: str = "swebench") -> str:
    if task.image:
        return task.image
    return f"{namespace}/sweb.eval.x86_64.{task.instance_id.replace('__', '_1776_').lower()}:latest"


def _test_files(test_patch: str) -> list[str]:
    from issuebench.harness.commands import files_in_diff

    return files_in_diff(test_patch)


def eval_script(task: Task, test_cmd: str, nonce: str, has_model_patch: bool) -> str:
    """The bash script run in the container: apply, reset tests, apply test patch, run, mark."""
    files = " ".join(shlex.quote(f) for f in _test_files(task.test_patch))
    base = shlex.quote(task.base_commit)
    lines = ["#!/bin/bash", "set -uo pipefail", f"cd {TESTBED}", f"{ACTIVATE} 2>/dev/null || true",
             f"git config --global --add safe.directory {TESTBED}"]
    if has_model_patch:
        # The reference's fallbacks, in its order.
        lines.append(
            f"git apply -v {STAGE}/model.patch || git apply -v --3way {STAGE}/model.patch || "
            f"git apply -v --reject {STAGE}/model.patch || patch --batch --forward --fuzz=5 -p1 -i {STAGE}/model.patch"
            f" || {{ echo '>>>>> Patch Apply Failed'; exit {APPLY_FAILED_EXIT}; }}")
    if files:
        lines.append(f"git checkout {base} -- {files} 2>/dev/null || true")
    if task.test_patch.strip():
        lines.append(f"git apply -v {STAGE}/test.patch || {{ echo '>>>>> Test Patch Apply Failed'; exit 98; }}")
    lines += [f"echo '>>>>> Start Test Output {nonce}'", test_cmd, f"echo '>>>>> End Test Output {nonce}'"]
    if files:
        lines.append(f"git checkout {base} -- {files} 2>/dev/null || true")
    return "\n".join(lines) + "\n"


def _archive(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name=f"{STAGE.strip('/')}/{name}")
            info.size = len(data)
            info.mode = 0o755 if name.endswith(".sh") else 0o644
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def container_config(task: Task, limits: Any, nonce: str) -> dict[str, Any]:
    """Keyword arguments for client.containers.create: no network, limits, labels, auto-remove."""
    config: dict[str, Any] = {
        "image": image_name(task),
        "command": ["/bin/bash", f"{STAGE}/run.sh"],
        "network_disabled": True,
        "auto_remove": True,
        "detach": True,
        "working_dir": TESTBED,
        "labels": {LABEL: "1", LABEL_PID: str(os.getpid()), "issuebench.instance": task.instance_id,
                   "issuebench.nonce": nonce},
        "nano_cpus": int(getattr(limits, "cpus", 1.0) * 1e9) if getattr(limits, "cpus", None) else int(1e9),
    }
    memory = getattr(limits, "memory_mb", None)
    if memory:
        config["mem_limit"] = f"{memory}m"
        config["memswap_limit"] = f"{memory}m"   # no swap beyond the limit
    procs = getattr(limits, "max_procs", None)
    if procs:
        config["pids_limit"] = procs
    return config


def _default_client() -> Any:
    import docker

    return docker.from_env()


def engine_available(client: Any | None = None) -> tuple[bool, str]:
    """(True, "") when a Docker engine answers; else (False, why)."""
    try:
        client = client or _default_client()
        client.ping()
        return True, ""
    except Exception as exc:  # the docker package raises many kinds when no engine is there
        return False, f"no Docker engine reachable: {type(exc).__name__}: {exc}"


def cleanup_containers(client: Any | None = None, *, pid: int | None = None) -> int:
    """Remove issuebench containers (of process `pid`, or all of them). Returns how many."""
    try:
        client = client or _default_client()
        label = f"{LABEL_PID}={pid}" if pid is not None else LABEL
        containers = client.containers.list(all=True, filters={"label": label})
    except Exception:
        return 0
    removed = 0
    for container in containers:
        try:
            container.remove(force=True)
            removed += 1
        except Exception:
            continue
    return removed


def install_cleanup(client: Any | None = None) -> None:
    """Remove this process's containers at exit and on SIGTERM/SIGINT (chaining earlier handlers)."""
    global _cleanup_installed
    with _cleanup_lock:
        if _cleanup_installed:
            return
        _cleanup_installed = True
    pid = os.getpid()
    atexit.register(cleanup_containers, client, pid=pid)
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(signum)

        def handler(num, frame, _previous=previous):
            cleanup_containers(client, pid=pid)
            if callable(_previous):
                _previous(num, frame)
            else:
                raise SystemExit(128 + num)

        signal.signal(signum, handler)


def run_in_docker(task: Task, model_patch: str | None, test_cmd: str, nonce: str, limits: Any,
                  *, client: Any | None = None) -> tuple[str, str]:
    """Run the task's tests with `model_patch` in the reference image. Returns (output, status)."""
    try:
        client = client or _default_client()
    except Exception as exc:
        return f"no Docker engine: {exc}", "docker_failed"
    install_cleanup(client)
    has_patch = bool(model_patch and model_patch.strip())
    files = {"run.sh": eval_script(task, test_cmd, nonce, has_patch), "test.patch": task.test_patch}
    if has_patch:
        files["model.patch"] = model_patch or ""
    config = container_config(task, limits, nonce)
    try:
        container = client.containers.create(**config)
    except Exception as exc:
        return f"could not create a container from {config['image']}: {exc}", "docker_failed"
    chunks: list[bytes] = []
    try:
        container.put_archive("/", _archive(files))
        container.start()
        reader = threading.Thread(target=lambda: chunks.extend(container.logs(stream=True, follow=True)),
                                  daemon=True)
        reader.start()
        timeout = float(getattr(limits, "timeout", 1800.0))
        try:
            result = container.wait(timeout=timeout)
        except Exception:   # requests' ReadTimeout / ConnectionError: the run outlived the limit
            _kill(container)
            reader.join(5)
            return _decode(chunks) + f"\n[issuebench] timed out after {timeout:.0f}s\n", "timeout"
        reader.join(30)
    except Exception as exc:
        _kill(container)
        return _decode(chunks) + f"\n[issuebench] docker error: {exc}\n", "docker_failed"
    output = _decode(chunks)
    code = int(result.get("StatusCode", -1)) if isinstance(result, dict) else -1
    if code == APPLY_FAILED_EXIT:
        return output, "apply_failed"
    if code == 137:   # SIGKILL inside a memory-limited container: the OOM killer
        return output, "memory_limit"
    return output, "ok"


def _kill(container: Any) -> None:
    for action in (lambda: container.kill(), lambda: container.remove(force=True)):
        try:
            action()
        except Exception:
            pass


def _decode(chunks: list[bytes]) -> str:
    return b"".join(c if isinstance(c, bytes) else str(c).encode() for c in chunks).decode("utf-8", "replace")
