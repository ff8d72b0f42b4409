"""Build an environment of any kind once per hash, as the Python builder does: the manifest
`<hash>/env.json` written last, the hash's file lock held while building, a failed build recorded
beside it (`<hash>.failed.json` and its log) so later instances fail fast until `--rebuild`."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from issuebench.envs import cache
from issuebench.envs.build_log import BuildLog, EnvBuildError, StepFailed

E = TypeVar("E")


def build_once(host: Any, env_hash: str, spec_json: dict[str, Any],
               load: Callable[[dict[str, Any]], E], build: Callable[[Path, BuildLog], dict[str, Any]]) -> E:
    """The env `load(manifest)` gives, after `build(path, log)` made it when it is not built yet.
    `build` returns the manifest's own fields; a StepFailed from it is recorded as the failure."""
    root: Path = host.root
    if not host.wants_rebuild(env_hash):
        manifest = cache.read_manifest(root, env_hash)
        if manifest is not None:
            cache.touch_last_used(root, env_hash)
            return load(manifest)
        raise_if_failed(root, env_hash)
    with cache.hash_lock(root, env_hash):
        if host.claim_rebuild(env_hash):
            cache.remove_env(root, env_hash)
        else:
            manifest = cache.read_manifest(root, env_hash)
            if manifest is not None:
                cache.touch_last_used(root, env_hash)
                return load(manifest)
            raise_if_failed(root, env_hash)
        return load(_build(root, env_hash, spec_json, build))


def raise_if_failed(root: Path, env_hash: str) -> None:
    failure = cache.read_failure(root, env_hash)
    if failure is not None:
        raise EnvBuildError(env_hash, f"{failure.get('reason', 'unknown')} (recorded {failure.get('time', '?')})")


def _build(root: Path, env_hash: str, spec_json: dict[str, Any],
           build: Callable[[Path, BuildLog], dict[str, Any]]) -> dict[str, Any]:
    path = cache.env_path(root, env_hash)
    shutil.rmtree(path, ignore_errors=True)   # an incomplete earlier attempt
    cache.clear_failure(root, env_hash)
    log = BuildLog(path / cache.BUILD_LOG)
    started = time.time()
    try:
        fields = build(path, log)
    except StepFailed as exc:
        log.close()
        cache.record_failure(root, env_hash, exc.reason, log.tail(), spec_json)
        shutil.copyfile(path / cache.BUILD_LOG, root / f"{env_hash}.failed.log")
        shutil.rmtree(path, ignore_errors=True)
        raise EnvBuildError(env_hash, exc.reason) from None
    log.close()
    manifest = {"env_hash": env_hash, "spec": spec_json, "decisions": log.notes,
                "build_seconds": round(time.time() - started, 3),
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **fields}
    cache.write_json_atomic(path / cache.MANIFEST, manifest)
    cache.touch_last_used(root, env_hash)
    return manifest
