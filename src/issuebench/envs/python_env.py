"""A built uv venv as the harness sees it (Env), and its bookkeeping in the cache: read from its
manifest env.json, the manifest written last when a build succeeds, a failure recorded when not."""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench.envs import cache
from issuebench.envs.build_log import BuildLog, EnvBuildError
from issuebench.envs.dating import exempt_from_cutoff
from issuebench.envs.interpreters import PythonInfo, uv_command
from issuebench.errors import IssuebenchError
from issuebench.models import EnvSpec
from issuebench.sandbox import Bind


@dataclass
class Env:
    path: Path
    spec: EnvSpec
    env_hash: str
    python_version: str
    python_prefix: Path | None = None
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def binds(self) -> list[Any]:
        """Read-only binds the sandbox needs: the venv and the interpreter installation it links to."""

        binds = [Bind(self.path)]
        if self.python_prefix is not None and not _is_under(self.path, self.python_prefix):
            binds.append(Bind(self.python_prefix))
        return binds

    def run_env(self) -> dict[str, str]:
        env = {
            "PATH": f"{self.path / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "VIRTUAL_ENV": str(self.path),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.update(self.spec.env_vars)
        return env


def _is_under(prefix: Path, path: Path) -> bool:
    try:
        path.relative_to(prefix)
        return True
    except ValueError:
        return False


def same_minor(wanted: str, used: str) -> bool:
    """Whether `used` (e.g. 3.9.18) is the Python `wanted` asks for (e.g. 3.9); "3" asks for any 3."""
    want = wanted.strip().split(".")
    return not used or used.split(".")[: len(want[:2])] == want[:2]


def load_env(root: Path, spec: EnvSpec, env_hash: str, python_fallback: str) -> Env | None:
    """The built env from its manifest; None when there is none (not built)."""
    manifest = cache.read_manifest(root, env_hash)
    if manifest is None:
        return None
    used = str(manifest.get("python_version", ""))
    if python_fallback == "error" and not same_minor(spec.python, used):
        # Built earlier under --python-fallback nearest: this run did not accept a stand-in.
        raise EnvBuildError(env_hash, f"this environment was built with Python {used} in place of "
                            f"Python {spec.python} (--python-fallback nearest)",
                            hint=f"pass --python-fallback nearest to use it, or install Python {spec.python}")
    cache.touch_last_used(root, env_hash)
    prefix = manifest.get("python_prefix")
    return Env(path=cache.env_path(root, env_hash), spec=spec, env_hash=env_hash,
               python_version=manifest.get("python_version", ""),
               python_prefix=Path(prefix) if prefix else None, manifest=manifest)


def raise_if_failed(root: Path, env_hash: str) -> None:
    """Fail fast with the reason of an earlier failed build of this hash."""
    failure = cache.read_failure(root, env_hash)
    if failure is not None:
        raise EnvBuildError(env_hash, f"{failure.get('reason', 'unknown')} (recorded {failure.get('time', '?')})")


def record_failure(root: Path, env_hash: str, reason: str, spec: EnvSpec, log: BuildLog) -> None:
    """<hash>.failed.json with the log beside it; the half-built venv dropped."""
    path = cache.env_path(root, env_hash)
    log.close()
    cache.record_failure(root, env_hash, reason, log.tail(), spec.model_dump(mode="json"))
    shutil.copyfile(path / cache.BUILD_LOG, root / f"{env_hash}.failed.log")
    shutil.rmtree(path, ignore_errors=True)


def write_manifest(root: Path, env_hash: str, spec: EnvSpec, requested_cutoff: str | None, python: PythonInfo,
                   log: BuildLog, started: float, uv_env: dict[str, str]) -> None:
    """env.json, the build's last step: what was asked, what was used and decided, what is installed."""
    path = cache.env_path(root, env_hash)
    manifest = {
        "env_hash": env_hash,
        "spec": spec.model_dump(mode="json"),
        "python_requested": spec.python,
        "python_version": python.version,
        "python_path": str(python.path),
        "python_prefix": str(python.prefix) if python.prefix else None,
        "python_fell_back": python.fell_back,
        "exclude_newer": spec.exclude_newer,
        "exclude_newer_requested": requested_cutoff,
        "exclude_newer_exempt": list(exempt_from_cutoff(spec)),
        "decisions": log.notes,
        "installed": _freeze(path, uv_env),
        "uv": _uv_version(),
        "build_seconds": round(time.time() - started, 3),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    cache.write_json_atomic(path / cache.MANIFEST, manifest)
    cache.touch_last_used(root, env_hash)


def _freeze(venv: Path, uv_env: dict[str, str]) -> list[str]:
    try:
        proc = subprocess.run([uv_command(), "pip", "freeze", "--python", str(venv / "bin" / "python")],
                              capture_output=True, text=True, timeout=120, env=uv_env)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return proc.stdout.splitlines() if proc.returncode == 0 else []


def _uv_version() -> str:
    try:
        return subprocess.run([uv_command(), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired, IssuebenchError):
        return ""
