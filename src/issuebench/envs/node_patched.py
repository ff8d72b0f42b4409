"""Dependencies a patch adds to package.json, installed beside the shared node_modules.

The reference's JavaScript eval scripts run `npm install` (or yarn's) after applying the patch,
with the network on, so a fix that adds a package to package.json gets it. Our test runs have no
network, and the environment's node_modules were installed from the base commit's files. So when
the patched package.json names a dependency that is new or in another range, those packages are
installed, as of the environment's date and with no install script run, into a layer cached per
environment and dependency set, and bound at `/tmp/node_modules` in the run: Node's resolution
(`require` and ES imports alike) walks up from the workspace at /tmp/testbed to that folder after
the project's own node_modules, so what the base commit installed still wins.
"""

from __future__ import annotations

import fcntl
import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from issuebench.envs.build_log import BuildLog, StepFailed
from issuebench.envs.node_tools import read_package_json
from issuebench.models import stable_hash
from issuebench.repos import git
from issuebench.sandbox import Bind

LAYER_DST = "/tmp/node_modules"
_SECTIONS = ("dependencies", "devDependencies", "optionalDependencies")
_LAYERS = "node-layers"
_LAYER_RULES = "1"
# A registry package name, and a range or tag the registry answers (not a path, URL or workspace).
_NAME = re.compile(r"^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$")
_RANGE = re.compile(r"^[0-9A-Za-z.^~<>=*|x +-]+$")


def _declared(manifest: dict) -> dict[str, str]:
    out: dict[str, str] = {}
    for section in _SECTIONS:
        entries = manifest.get(section)
        if isinstance(entries, dict):
            out.update({str(k): str(v) for k, v in entries.items()})
    return out


def added_dependencies(workspace: Path) -> dict[str, str]:
    """name -> range for what the work tree's package.json declares beyond its commit's."""
    shown = git(workspace, "show", "HEAD:package.json", check=False)
    try:
        before = json.loads(shown.stdout) if shown.returncode == 0 else {}
    except ValueError:
        before = {}
    old = _declared(before if isinstance(before, dict) else {})
    new = _declared(read_package_json(workspace))
    return {name: spec for name, spec in sorted(new.items())
            if old.get(name) != spec and _NAME.match(name) and _RANGE.match(spec)}


def patched_layer(kind: Any, env: Any, added: dict[str, str]) -> tuple[Path | None, str]:
    """(the layer's node_modules, a note): installed once per environment and dependency set."""
    root = Path(env.path).parent / _LAYERS
    root.mkdir(parents=True, exist_ok=True)
    name = stable_hash([_LAYER_RULES, env.env_hash, sorted(added.items())])[:16]
    path = root / name
    wanted = ", ".join(f"{k}@{v}" for k, v in added.items())
    note = f"dependencies the patch adds to package.json, from a layer: {wanted}"
    if (path / ".done").is_file():
        return path / "node_modules", note
    with (root / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (path / ".done").is_file():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir()
            log = BuildLog(path / "install.log")
            specs = " ".join(shlex.quote(f"{k}@{v}") for k, v in added.items())
            command = f"npm install --no-save --no-package-lock --ignore-scripts --prefix . {specs}"
            try:
                kind.install_commands(env, [command], path, log)
            except StepFailed as exc:
                shutil.rmtree(path, ignore_errors=True)
                return None, f"dependencies the patch adds to package.json could not be installed ({wanted}): {exc}"
            finally:
                log.close()
            (path / ".done").write_text(wanted + "\n")
    return path / "node_modules", note


def layer_bind(node_modules: Path) -> Bind:
    return Bind(node_modules, dst=LAYER_DST)
