"""Debian packages that recipes need from the system, checked before a build and installed on request.

The reference's conda environments bring shared libraries along (xarray's cfgrib needs ecCodes);
uv environments take them from the system. A recipe names them in `system_packages`; the build
checks they are there and, when not, fails with the command that installs them.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from issuebench.envs._toml import tomllib


def missing(packages: Iterable[str]) -> list[str]:
    """The packages dpkg does not list as installed (all of them when there is no dpkg)."""
    wanted = list(dict.fromkeys(packages))
    if not wanted:
        return []
    if shutil.which("dpkg-query") is None:
        return wanted
    proc = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Status}\\n", *wanted],
                          capture_output=True, text=True, check=False)
    installed = {line.split()[0] for line in proc.stdout.splitlines() if line.endswith("install ok installed")}
    return [p for p in wanted if p not in installed]


def install_command(packages: Iterable[str]) -> str:
    return "apt-get install -y --no-install-recommends " + " ".join(packages)


def recipe_packages(recipes_dir: Path) -> dict[str, list[str]]:
    """repo -> the system packages its recipe file names (defaults and every version)."""
    out: dict[str, list[str]] = {}
    for path in sorted(recipes_dir.glob("*.toml")):
        if path.name.startswith("_"):
            continue
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        tables = [data.get("defaults", {}), *data.get("versions", {}).values()]
        names = [p for t in tables for p in t.get("system_packages", [])]
        if names:
            out[str(data.get("repo", path.stem))] = list(dict.fromkeys(names))
    return out
