"""Turn a conda environment file into pip requirement lines uv can install.

Only the names and versions carry over: conda-only packages (compilers, system libraries) are
skipped and reported, so the build log says what the environment lacks compared with conda's.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Any

import yaml

from issuebench.tomlcompat import tomllib


@functools.lru_cache(maxsize=1)
def _table() -> tuple[dict[str, str], frozenset[str]]:
    text = resources.files("issuebench.envs").joinpath("recipes/_conda_to_pip.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    return dict(data.get("rename", {})), frozenset(data.get("skip", {}).get("names", []))


def conda_to_pip(spec: str) -> str | None:
    """`numpy=1.25` / `numpy>=1.2` / `conda-forge::numpy` -> a pip requirement; None when conda-only."""
    rename, skip = _table()
    spec = spec.strip().split("::")[-1]
    match = re.match(r"^([A-Za-z0-9_.\-]+)\s*(.*)$", spec)
    if not match:
        return None
    name, version = match.group(1), match.group(2).strip()
    if name.lower() in skip:
        return None
    name = rename.get(name.lower(), name)
    if not name:
        return None
    version = version.split()[0] if version else ""   # drop a conda build string
    if re.fullmatch(r"=?[0-9][^<>=!,|]*", version):
        # conda's `=1.2` means 1.2.*; `==1.2` exact.
        exact = version.lstrip("=")
        version = f"=={exact}" if version.startswith("==") else f"=={exact}.*" if exact.count(".") < 2 else f"=={exact}"
    return f"{name}{version}"


def requirements_from_conda_env(text: str) -> tuple[list[str], list[str]]:
    """(pip requirement lines, conda entries that could not be translated)."""
    data: Any = yaml.safe_load(text) or {}
    lines: list[str] = []
    skipped: list[str] = []
    for dep in data.get("dependencies", []) or []:
        if isinstance(dep, dict):
            lines += [str(d) for d in dep.get("pip", []) or []]
            continue
        req = conda_to_pip(str(dep))
        if req is None:
            name = str(dep).split("::")[-1].split("=")[0].split()[0]
            if name.lower() not in ("python", "pip"):
                skipped.append(str(dep))
        else:
            lines.append(req)
    return lines, skipped
