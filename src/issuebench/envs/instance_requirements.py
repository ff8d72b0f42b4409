"""What a task's own commit asks of the shared environment, and a layer that gives it.

The reference installs the project (`pip install -e .`) in every instance's image, at the instance's
base commit. We build one environment per recipe, from one commit, and share it: far cheaper, and
the code under test is each workspace's own either way (the install is editable). What can differ is
what the commit declares: a pytest of spring 2020 imports wcwidth, which the version's environment,
installed from a later commit that had dropped it, never got. So for each instance we read the
requirements its commit declares (the reader the build uses), compare them with what the
environment holds, and install only what is missing or out of range, as of the environment's date,
into a layer folder put first on the run's PYTHONPATH. Layers are cached per environment and
requirement set; the environment itself is never written.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.markers import InvalidMarker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from issuebench.envs.dated_install import (
    HelperFailed,
    local_install_targets,
    pep621_requirements,
    read_declared,
    split_listing,
    wanted_extras,
)
from issuebench.envs.dating import date_args, exempt_from_cutoff
from issuebench.envs.interpreters import uv_command
from issuebench.errors import IssuebenchError
from issuebench.models import EnvSpec, stable_hash
from issuebench.repos import changed_paths, git, reset_paths
from issuebench.sandbox import Bind

# The files a commit declares its requirements in; the same blob ids mean the same answer.
_DECLARING_FILES = ("setup.py", "setup.cfg", "pyproject.toml")
_LAYERS = "layers"
# Bumped when how a layer is installed changes: a layer of older rules is never reused.
_LAYER_RULES = "3"
# A dry run's plan: ` + name==version` for each distribution it would install.
_PLANNED = re.compile(r"^\s*\+\s+([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)\s*$", re.MULTILINE)
_ANSWERS = ".issuebench-instance-requirements"
# Bumped when what an answer means changes: answers of older rules are asked again (before "2", a
# helper that could not run was cached as "nothing declared").
_ANSWER_RULES = "2"
DECLARED_TIMEOUT = 300.0


@dataclass
class Layer:
    """A folder of packages the instance needs beyond its environment."""

    path: Path
    requirements: list[str]

    def binds(self) -> list[Any]:

        return [Bind(self.path)]

    def apply(self, run_env: dict[str, str]) -> dict[str, str]:
        """The run's environment with the layer first on the import path and its scripts on PATH."""
        out = dict(run_env)
        out["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.path), run_env.get("PYTHONPATH", "")) if p)
        if (self.path / "bin").is_dir():
            out["PATH"] = f"{self.path / 'bin'}:{run_env.get('PATH', '')}"
        return out


def unmet(declared: list[str], installed: list[str], python_version: str, project: str | None) -> list[str]:
    """The declared requirements (PEP 508 lines) that the installed set (`name==version` lines)
    does not satisfy on this interpreter. The project itself is never one."""
    versions: dict[str, str] = {}
    for line in installed:
        name, sep, version = line.partition("==")
        if sep:
            versions[canonicalize_name(name.strip())] = version.strip()
    own = canonicalize_name(project) if project else None
    marker_env = {"python_version": ".".join(python_version.split(".")[:2]),
                  "python_full_version": python_version, "extra": ""}
    out: list[str] = []
    for text in declared:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if name == own or req.url:
            continue
        try:
            if req.marker is not None and not req.marker.evaluate(marker_env):
                continue
        except InvalidMarker:
            continue
        have = versions.get(name)
        if have is None or (req.specifier and not req.specifier.contains(have, prereleases=True)):
            out.append(str(req))
    return list(dict.fromkeys(out))


def declaring_blobs(ws: Path) -> dict[str, str]:
    """Blob ids of the files that declare the project's requirements, at the workspace's HEAD."""

    out = {}
    for name in _DECLARING_FILES:
        proc = git(ws, "rev-parse", f"HEAD:{name}", check=False)
        if proc.returncode == 0:
            out[name] = proc.stdout.strip()
    return out


def worktree_blobs(ws: Path) -> dict[str, str]:
    """Blob ids of the declaring files as the workspace's files are now (after a patch)."""

    out = {}
    for name in _DECLARING_FILES:
        if (ws / name).is_file():
            proc = git(ws, "hash-object", "--", name, check=False)
            if proc.returncode == 0:
                out[name] = proc.stdout.strip()
    return out


def layer_for(env: Any, ws: Path, sandbox: Any, env_builder: Any, *,
              patched: bool = False) -> tuple[Layer | None, str | None]:
    """instance_layer for a run: nothing for environments not built by our builder. A failure to
    install what is missing becomes a note; the helper that reads the declarations failing raises
    HelperFailed (the caller fails the instance: what the commit needs is then unknown)."""

    uv_env = getattr(env_builder, "uv_env", None)
    if uv_env is None or not getattr(env, "manifest", None):
        return None, None
    try:
        return instance_layer(env, ws, sandbox, uv_env(), patched=patched)
    except HelperFailed:
        raise
    except (OSError, subprocess.SubprocessError, IssuebenchError) as exc:
        return None, f"the commit's declared requirements could not be checked: {exc}"


def instance_layer(env: Any, ws: Path, sandbox: Any, uv_env: dict[str, str], *,
                   patched: bool = False) -> tuple[Layer | None, str | None]:
    """The layer this workspace's commit needs on top of `env` (None when it needs nothing), and a
    note for the result saying what was added or why it could not be.

    `patched`: the workspace's files after the patches instead, as the reference's `pip install -e .`
    after the patch reads them (a fix that adds a requirement and imports it); None when the patches
    left the declaring files as the commit has them. Its packages are taken as wheels only: a
    patch names them, and no build of theirs may run outside the sandbox."""

    spec: EnvSpec = env.spec
    targets = local_install_targets(spec.install)
    blobs = worktree_blobs(ws) if patched else declaring_blobs(ws)
    if not targets or not blobs or (patched and blobs == declaring_blobs(ws)):
        return None, None
    extras = wanted_extras(targets)
    answers = Path(env.path) / _ANSWERS
    key = stable_hash([_ANSWER_RULES, blobs, extras])[:16]
    known = _read_json(answers / f"{key}.json")
    if known is None:
        declared, project, unreadable = declared_requirements(env, ws, sandbox, extras)
        missing = unmet(declared, env.manifest.get("installed", []), env.python_version, project) \
            if declared is not None else []
        known = {"missing": missing, "unreadable": unreadable}
        _write_json(answers / f"{key}.json", known)
    if known.get("unreadable"):
        return None, (f"the project's declared requirements at this commit could not be read "
                      f"({known['unreadable']}); the tests run in the version's environment as built")
    missing = known["missing"]
    if not missing:
        return None, None
    layer, error = _ensure_layer(env, missing, uv_env, wheels_only=patched)
    if layer is None and not error:
        return None, None
    who = "the patched project" if patched else "the project at this commit"
    if layer is None:
        return None, f"{who} declares {', '.join(missing)}, which the environment lacks; installing them failed: {error}"
    return layer, (f"{who} declares {', '.join(missing)}, which the version's environment lacks: "
                   f"{', '.join(layer.requirements)} installed as of {env.manifest.get('exclude_newer') or 'today'} "
                   + ("(wheels only) into a layer for this run, as the reference's `pip install -e .` after the patch "
                      "would" if patched else "into a layer for this commit, as the reference's per-instance install would"))


def declared_requirements(env: Any, ws: Path, sandbox: Any,
                          extras: list[str]) -> tuple[list[str] | None, str | None, str]:
    """The commit's declared requirements, the project's name, and why they could not be read ("" when
    they could). Whatever reading them leaves in the workspace is put back as it was.

    Raises HelperFailed when the declared-requirements script itself gives no answer."""

    lines = pep621_requirements(ws, extras)
    if lines is None:
        before = set(changed_paths(ws, include_ignored=True))
        try:
            answer = read_declared(sandbox, "python", ws, extras, binds=env.binds(), env=env.run_env(),
                                   network=False, timeout=DECLARED_TIMEOUT)
        finally:
            stray = [p for p in changed_paths(ws, include_ignored=True) if p not in before]
            if stray:
                reset_paths(ws, "HEAD", stray)
        if answer.lines is None:
            return None, None, answer.unreadable
        lines = answer.lines
    requirements, project = split_listing(lines)
    return requirements, project, ""


def _ensure_layer(env: Any, missing: list[str], uv_env: dict[str, str], *,
                  wheels_only: bool = False) -> tuple[Layer | None, str]:
    """Install `missing` as of the environment's date into a cached layer folder."""

    root = Path(env.path).parent / _LAYERS
    root.mkdir(parents=True, exist_ok=True)
    binary = ["--only-binary", ":all:"] if wheels_only else []
    name = stable_hash([_LAYER_RULES, env.env_hash, sorted(missing), *binary])[:16]
    path = root / name
    if (path / ".done").is_file():
        return Layer(path, (path / ".done").read_text().split("\n")[:-1]), ""
    cutoff = env.manifest.get("exclude_newer")
    with (root / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (path / ".done").is_file():
            return Layer(path, (path / ".done").read_text().split("\n")[:-1]), ""
        shutil.rmtree(path, ignore_errors=True)
        # As `pip install -e .` at the commit would: what the environment holds stays wherever it
        # satisfies the commit, and only what is missing or out of range is added. uv plans that
        # against the environment itself (a dry run writes nothing), and the plan is installed
        # exactly, without dependencies, into the layer: the environment is never written, and no
        # second copy of a package it already has in range (a second numpy beside the numba built
        # against the first) ever reaches the path.
        dated = date_args(cutoff, exempt_from_cutoff(env.spec))
        plan_argv = [uv_command(), "pip", "install", "--dry-run", "--python", str(env.python), *dated, *binary,
                     *missing]
        proc = subprocess.run(plan_argv, capture_output=True, text=True, env=uv_env, timeout=1800)
        plan = _PLANNED.findall(proc.stdout + proc.stderr) if proc.returncode == 0 else []
        if proc.returncode == 0 and not plan:
            return None, ""   # the environment satisfies it after all (a marker read differently)
        if not plan:
            return None, (proc.stderr.strip().splitlines() or ["no message"])[-1]
        pins = [f"{name}=={version}" for name, version in plan]
        proc = subprocess.run([uv_command(), "pip", "install", "--target", str(path), "--no-deps", "--python",
                               str(env.python), *dated, *binary, *pins], capture_output=True, text=True,
                              env=uv_env, timeout=1800)
        if proc.returncode == 0:
            (path / ".done").write_text("\n".join(pins) + "\n")
            return Layer(path, pins), ""
        shutil.rmtree(path, ignore_errors=True)
        error = (proc.stderr.strip().splitlines() or ["no message"])[-1]
    return None, error


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)
