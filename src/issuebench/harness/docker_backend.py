"""Run one instance in the reference's prebuilt image, through the Docker engine API.

For comparison runs against the official environments (`--backend docker`): the task's `image`
field, or `swebench/sweb.eval.x86_64.<instance id with __ as _1776_>:latest`. The container has no
network, CPU, memory and process limits, labels that identify this process, and auto-removal;
containers left by a killed run are removed at exit, on SIGTERM/SIGINT, or later by label
(`cleanup_containers`).

    run_in_docker(task, model_patch, test_cmd, nonce, limits) -> (output, status)

status: "ok" | "apply_failed" | "timeout" | "memory_limit" | "docker_failed".

Only where the tests run changes: the model patch gets the local backend's guards (test files, hook
files and test-runner configuration it touched are put back), and the nonce never enters the
container. The script prints a fixed line just before it hands over to the tests; the code under
test runs only after it, so the first such line is the script's own, and everything after it is
the test output, which the host wraps in markers carrying the nonce.
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

from issuebench.harness.commands import files_in_diff
from issuebench.harness.guards import CONFIG_FILES, is_hook_file
from issuebench.models import Task
from issuebench.patch import files_touched, is_test_path

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


# Printed by the script right before the tests take over the process (no nonce: see the docstring).
TESTS_BEGIN = ">>>>> issuebench: the tests begin"
# The test-runner section of a config file, by its header: [pytest], [tool:pytest], [tool.pytest...].
_RUNNER_SECTION = "awk '/^\\[/ {on = ($0 ~ /^\\[(pytest\\]|tool:pytest\\]|tool\\.pytest)/)} on'"


def _test_files(test_patch: str) -> list[str]:

    return files_in_diff(test_patch)


def guarded_files(model_patch: str, test_patch: str) -> tuple[list[str], list[str]]:
    """What the local backend's guards look at: (tests and hook files the model touched, which are
    put back; runner config files it touched, put back when their test-runner section changed)."""
    from pathlib import PurePosixPath


    tests = set(_test_files(test_patch))
    touched = [p for p in files_touched(model_patch) if p not in tests]
    put_back = [p for p in touched if is_test_path(p) or is_hook_file(p)]
    configs = [p for p in touched if p not in put_back and PurePosixPath(p).name in CONFIG_FILES]
    return put_back, configs


def _guard_lines(base: str, model_patch: str, test_patch: str) -> list[str]:
    put_back, configs = guarded_files(model_patch, test_patch)
    restore = "git checkout {base} -- {f} 2>/dev/null || rm -f -- {f}; echo 'issuebench: put back {name}'"
    lines = [restore.format(base=base, f=shlex.quote(f), name=f.replace("'", "")) for f in put_back]
    if configs:
        lines.append(f"_runner_section() {{ {_RUNNER_SECTION}; }}")
    for f in configs:
        q = shlex.quote(f)
        lines.append(f"cmp -s <(git show {base}:{q} 2>/dev/null | _runner_section) <(_runner_section < {q} "
                     f"2>/dev/null) || {{ {restore.format(base=base, f=q, name=f.replace(chr(39), ''))}; }}")
    return lines


def eval_script(task: Task, test_cmd: str, model_patch: str | None) -> str:
    """The bash script run in the container: apply, guard, reset tests, apply test patch, run."""
    files = " ".join(shlex.quote(f) for f in _test_files(task.test_patch))
    base = shlex.quote(task.base_commit)
    lines = ["#!/bin/bash", "set -uo pipefail", f"cd {TESTBED}", f"{ACTIVATE} 2>/dev/null || true",
             f"git config --global --add safe.directory {TESTBED}"]
    if model_patch and model_patch.strip():
        # The reference's fallbacks, in its order.
        lines.append(
            f"git apply -v {STAGE}/model.patch || git apply -v --3way {STAGE}/model.patch || "
            f"git apply -v --reject {STAGE}/model.patch || patch --batch --forward --fuzz=5 -p1 -i {STAGE}/model.patch"
            f" || {{ echo '>>>>> Patch Apply Failed'; exit {APPLY_FAILED_EXIT}; }}")
        lines += _guard_lines(base, model_patch, task.test_patch)
    if files:
        lines.append(f"git checkout {base} -- {files} 2>/dev/null || true")
    if task.test_patch.strip():
        lines.append(f"git apply -v {STAGE}/test.patch || {{ echo '>>>>> Test Patch Apply Failed'; exit 98; }}")
    # The staged files go before the tests start: nothing the tests could read is left behind.
    lines += [f"rm -rf {STAGE}", f"echo '{TESTS_BEGIN}'", f"exec bash -c {shlex.quote(test_cmd)}"]
    return "\n".join(lines) + "\n"


def mark_test_output(raw: str, nonce: str) -> str:
    """The container's output with the test part (after the script's first TESTS_BEGIN line)
    between nonce markers; without that line, the tests never started and nothing is marked."""
    head, found, tests = raw.partition(TESTS_BEGIN + "\n")
    if not found:
        return raw
    return f"{head}>>>>> Start Test Output {nonce}\n{tests}\n>>>>> End Test Output {nonce}\n"


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


def container_config(task: Task, limits: Any) -> dict[str, Any]:
    """Keyword arguments for client.containers.create: no network, limits, labels, auto-remove."""
    config: dict[str, Any] = {
        "image": image_name(task),
        "command": ["/bin/bash", f"{STAGE}/run.sh"],
        "network_disabled": True,
        "auto_remove": True,
        "detach": True,
        "working_dir": TESTBED,
        "labels": {LABEL: "1", LABEL_PID: str(os.getpid()), "issuebench.instance": task.instance_id},
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
    files = {"run.sh": eval_script(task, test_cmd, model_patch), "test.patch": task.test_patch}
    if model_patch and model_patch.strip():
        files["model.patch"] = model_patch
    config = container_config(task, limits)
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
        except Exception as exc:
            if not _is_read_timeout(exc):
                raise  # an engine that went away is not a run that outlived its limit
            _kill(container)
            reader.join(5)
            return mark_test_output(_decode(chunks), nonce) + f"\n[issuebench] timed out after {timeout:.0f}s\n", \
                "timeout"
        reader.join(30)
    except Exception as exc:
        _kill(container)
        return _decode(chunks) + f"\n[issuebench] docker error: {type(exc).__name__}: {exc}\n", "docker_failed"
    output = mark_test_output(_decode(chunks), nonce)
    code = int(result.get("StatusCode", -1)) if isinstance(result, dict) else -1
    if code == APPLY_FAILED_EXIT:
        return output, "apply_failed"
    if code == 137:   # SIGKILL inside a memory-limited container: the OOM killer
        return output, "memory_limit"
    return output, "ok"


def _is_read_timeout(exc: BaseException) -> bool:
    """The engine's wait outlived its timeout: requests raises ReadTimeout, or a ConnectionError
    wrapping urllib3's ReadTimeoutError. Anything else (a refused or reset connection) is not."""
    try:
        from requests.exceptions import ConnectionError as RequestsConnectionError
        from requests.exceptions import ReadTimeout
    except ImportError:  # pragma: no cover - docker depends on requests
        return False
    if isinstance(exc, ReadTimeout):
        return True
    return isinstance(exc, RequestsConnectionError) and "timed out" in str(exc).lower()


def _kill(container: Any) -> None:
    for action in (lambda: container.kill(), lambda: container.remove(force=True)):
        try:
            action()
        except Exception:
            pass


def _decode(chunks: list[bytes]) -> str:
    return b"".join(c if isinstance(c, bytes) else str(c).encode() for c in chunks).decode("utf-8", "replace")
