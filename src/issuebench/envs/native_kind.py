"""The "native" kind (C and C++): Debian's toolchain and the libraries the recipe names.

Nothing is installed per environment: the compilers, make, cmake, autotools and tcl are the
system's Debian packages (`system_packages`, installed by `issuebench envs system-deps` or the
project's install script), checked before the first build. The environment is its manifest: the
packages and the toolchain's versions, content-addressed like every other kind, so a report says
what built the code. The project itself is built in each workspace by the build steps of the row's
eval_script (or the recipe's pre_test), in the sandbox, with the network off.

Libraries a repository keeps in git submodules (which a fetched snapshot lacks) come from
Debian's build of the same library where the project's build accepts a system one; the recipe
says so with `script_rewrites` on the row's build steps (jq: the system's oniguruma).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench.envs import cache, system_deps
from issuebench.envs.build_log import BuildLog, EnvBuildError, StepFailed
from issuebench.envs.kind_cache import build_once
from issuebench.envs.kinds import RunPreparation, plain_preparation
from issuebench.models import EnvSpec
from issuebench.sandbox import Bind

# Programs every native build here may use; their versions go into the manifest.
TOOLCHAIN = ("gcc", "g++", "make", "cmake", "autoreconf", "tclsh")


@dataclass
class NativeEnv:
    path: Path
    spec: EnvSpec
    env_hash: str
    manifest: dict[str, Any] = field(default_factory=dict)

    def binds(self) -> list[Bind]:
        return []   # the toolchain is the system's, visible read-only in the sandbox

    def run_env(self) -> dict[str, str]:
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", **self.spec.env_vars}


class NativeKind:
    name = "native"

    def __init__(self, host: Any) -> None:
        self.host = host

    def ensure(self, spec: EnvSpec, workspace: Path) -> NativeEnv:
        env_hash = spec.env_hash()
        absent = system_deps.missing_packages(spec.system_packages)
        if absent:
            # Not recorded as a failed build: installing the packages fixes it without --rebuild.
            raise EnvBuildError(env_hash, f"the recipe needs Debian packages that are not installed: {', '.join(absent)}",
                                hint=f"run `issuebench envs system-deps` as root ({system_deps.install_command(absent)})")

        def load(manifest: dict[str, Any]) -> NativeEnv:
            return NativeEnv(cache.env_path(self.host.root, env_hash), spec, env_hash, manifest)

        return build_once(self.host, env_hash, spec.model_dump(mode="json"), load, lambda path, log: _build(spec, log))

    def prepare_run(self, env: Any, workspace: Path) -> RunPreparation:
        return plain_preparation(env)


def _build(spec: EnvSpec, log: BuildLog) -> dict[str, Any]:
    versions = toolchain_versions()
    missing = [name for name in ("gcc", "make") if name not in versions]
    if missing:
        raise StepFailed(f"the C toolchain is missing {', '.join(missing)} (Debian: apt-get install build-essential)")
    for name, version in versions.items():
        log.write(f"# {name}: {version}")
    return {"kind": "native", "toolchain": versions, "system_packages": spec.system_packages}


def toolchain_versions() -> dict[str, str]:
    """The first version-looking word each installed program prints."""
    out: dict[str, str] = {}
    for name in TOOLCHAIN:
        exe = shutil.which(name)
        if exe is None:
            continue
        flag = "--version" if name != "tclsh" else None
        try:
            proc = subprocess.run([exe, flag] if flag else [exe], input="puts [info patchlevel]\n",
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        match = re.search(r"\d+\.\d+(?:\.\d+)?", proc.stdout + proc.stderr)
        out[name] = match.group(0) if match else "unknown"
    return out
