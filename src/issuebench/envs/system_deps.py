"""Debian packages that recipes need from the system, checked before a build and installed on request.

The reference's conda environments bring shared libraries along (xarray's cfgrib needs ecCodes);
uv environments take them from the system. A recipe names them in `system_packages`; eval and
validate check them for the selected tasks before anything runs (harness.system_check), and the
build checks them again and, when absent, fails with the command that installs them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from issuebench.errors import IssuebenchError, OptionError
from issuebench.tomlcompat import tomllib


def missing_packages(packages: Iterable[str]) -> list[str]:
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


def unknown_packages(packages: Iterable[str]) -> list[str]:
    """The packages this machine's apt does not know (another Debian release's, say); none when
    there is no apt-cache to ask."""
    wanted = list(dict.fromkeys(packages))
    if not wanted or shutil.which("apt-cache") is None:
        return []
    known = set()
    for package in wanted:
        proc = subprocess.run(["apt-cache", "show", "--no-all-versions", package],
                              capture_output=True, text=True, check=False)
        if proc.returncode == 0 and proc.stdout.strip():
            known.add(package)
    return [p for p in wanted if p not in known]


def install_command(packages: Iterable[str]) -> str:
    return "apt-get install -y --no-install-recommends " + " ".join(packages)


def install_packages(packages: Iterable[str], *, option: str | None = None) -> None:
    """apt-get update, then install `packages` (root only). Raises one line naming what failed;
    `option` is the flag that asked for it, named when root is missing."""
    packages = list(packages)
    command = install_command(packages)
    if os.geteuid() != 0:
        message = f"installing {', '.join(packages)} needs root"
        if option is not None:
            raise OptionError(option, message, hint=f"run as root, or install them first: {command}")
        raise IssuebenchError(message, hint=f"run as root: {command}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}  # never a question on the terminal
    for argv in (["apt-get", "update", "-qq"], command.split()):
        if subprocess.run(argv, check=False, env=env).returncode != 0:
            raise IssuebenchError(f"`{' '.join(argv)}` failed", hint="see apt-get's message above")


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
