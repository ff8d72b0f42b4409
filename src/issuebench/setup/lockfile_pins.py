"""The versions a repository's own lockfile holds, as pins for the packages setup installs.

Setup resolves a repository's ranges as of the task's date. A project that locks its
dependencies (poetry.lock, uv.lock, pdm.lock, Pipfile.lock) ran its CI on the locked versions,
and a range like `bleak>=1` then admits a release the code at that commit never met
(bleak-retry-connector: its lock held bleak 1.1.1; bleak 2, out before the task's date, removed
internals its tests patch, and 21 of 54 tests failed). When a suite mostly fails, the locked
versions are the next thing to try, before another Python.
"""

from __future__ import annotations

import json

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from issuebench.setup.source import SourceTree
from issuebench.tomlcompat import tomllib

# TOML lockfiles whose [[package]] tables carry a name and a version.
_TOML_LOCKS = ("poetry.lock", "uv.lock", "pdm.lock")
_PIPFILE_LOCK = "Pipfile.lock"
_LOCK_NONE: tuple[str, dict[str, str]] = ("", {})
# The note a recipe pinned to its commit's lockfile carries (another commit's lock may differ).
LOCK_NOTE = "setup: pinned to the versions of the lockfile"


def locked_versions(tree: SourceTree) -> tuple[str, dict[str, str]]:
    """(the lockfile read, canonical name -> locked version); ("", {}) when the root holds none
    that parses. The project itself (uv's editable or virtual source) is left out."""
    for name in _TOML_LOCKS:
        text = tree.read(name)
        if text is None:
            continue
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            continue
        found: dict[str, set[str]] = {}
        for pkg in data.get("package", []):
            if isinstance(pkg, dict) and pkg.get("name") and pkg.get("version") and not _is_project(pkg):
                found.setdefault(canonicalize_name(str(pkg["name"])), set()).add(str(pkg["version"]))
        if found:
            # A package locked at several versions (uv's forks per Python or platform) has no one
            # version to pin: it is left to the date.
            return name, {key: next(iter(vs)) for key, vs in found.items() if len(vs) == 1}
    pipfile = tree.read(_PIPFILE_LOCK)
    return _LOCK_NONE if pipfile is None else _pipfile_versions(pipfile)


def _is_project(pkg: dict) -> bool:
    source = pkg.get("source")
    return isinstance(source, dict) and bool({"editable", "virtual"} & set(source))


def _pipfile_versions(text: str) -> tuple[str, dict[str, str]]:
    try:
        data = json.loads(text)
    except ValueError:
        return _LOCK_NONE
    versions: dict[str, str] = {}
    for section in ("develop", "default"):     # the runtime's pin wins where both name a package
        for name, entry in (data.get(section) or {}).items():
            version = entry.get("version", "") if isinstance(entry, dict) else ""
            if version.startswith("=="):
                versions[canonicalize_name(name)] = version[2:]
    return (_PIPFILE_LOCK, versions) if versions else _LOCK_NONE


def pinned_to_lock(packages: list[str], locked: dict[str, str],
                   *, over_exact: bool = False) -> tuple[list[str], list[str]]:
    """(packages with each one the lock names pinned to its locked version, the pins made).
    Extras and markers are kept; a requirement that is no name stays, and so does one already
    pinned exactly unless `over_exact` (a pin an earlier lock made)."""
    out: list[str] = []
    pins: list[str] = []
    for package in packages:
        req = _parsed(package)
        version = locked.get(canonicalize_name(req.name)) if req else None
        if req is None or version is None or (
                not over_exact and any(s.operator in ("==", "===") for s in req.specifier)):
            out.append(package)
            continue
        out.append(_at_version(req, version))
        pins.append(f"{req.name}=={version}")
    return out, pins


def lock_pinned(notes: list[str]) -> bool:
    """Whether a recipe's notes say it was pinned to its commit's lockfile."""
    return any(note.startswith(LOCK_NOTE) for note in notes)


def repinned_to_lock(packages: list[str], notes: list[str], tree: SourceTree) -> list[str]:
    """A remembered recipe's packages for another commit: when its notes say they were pinned to
    its own commit's lockfile, each package this commit's lock names takes this lock's version
    (bleak-retry-connector: 4.4's recipe held bleak 1.1.1; 4.5's lock, bleak 2.x)."""
    if not lock_pinned(notes):
        return packages
    return pinned_to_lock(packages, locked_versions(tree)[1], over_exact=True)[0]


def _parsed(package: str) -> Requirement | None:
    try:
        return Requirement(package)
    except InvalidRequirement:
        return None


def _at_version(req: Requirement, version: str) -> str:
    """The requirement pinned to `version`, its extras and marker kept."""
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}=={version}" + (f"; {req.marker}" if req.marker else "")
