"""Which releases of a package admit an interpreter, by the `requires-python` the index publishes.

uv ignores the upper bound of a release's requires-python (it resolves numba 0.52.0, `<3.9`, for
Python 3.9 and would build it from source); the pip that runs a recipe's `pip install -e .` does
not, and then finds no numba at all. The dated resolution therefore checks its answer against the
bounds and takes a release that refuses the interpreter as the first one after the date that
admits it, as the reference's images (built later) had it.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from issuebench.index import index_files, version_of

# Index pages read at once when a whole resolution is checked (one request per package).
_FETCHERS = 8


@lru_cache(maxsize=4096)
def _releases(name: str) -> tuple[tuple[str, str, str], ...]:
    """(version, requires-python, upload time) of every non-yanked file of `name`; () when unknown."""
    try:
        files = index_files(name)
    except (OSError, ValueError):
        return ()  # offline or no JSON API: nothing is known, so nothing is changed
    out = []
    for entry in files:
        version = version_of(entry.get("filename", ""), name)
        if version and not entry.get("yanked"):
            out.append((version, entry.get("requires-python") or "", entry.get("upload-time") or ""))
    return tuple(out)


def _admits(requires_python: str, python: str) -> bool:
    try:
        return SpecifierSet(requires_python).contains(python, prereleases=True) if requires_python else True
    except InvalidSpecifier:
        return True  # an unreadable bound is not a reason to change a resolution


def refuses(name: str, version: str, python: str) -> bool:
    """Whether every file of `name==version` declares a requires-python that excludes `python`."""
    bounds = [rp for v, rp, _ in _releases(canonicalize_name(name)) if v == version]
    return bool(bounds) and not any(_admits(rp, python) for rp in bounds)


def refused(pins: Iterable[tuple[str, str]], python: str) -> list[str]:
    """The names among `pins` (name, version) whose release refuses the interpreter."""
    pins = list(pins)
    # Not a fan-out through executors.drive: these are the index reads of one environment build,
    # inside whatever worker builds it; a read that fails fails the build, and there is no
    # per-item result for a driver to record or a process of its own to stop.
    with ThreadPoolExecutor(_FETCHERS) as pool:
        verdicts = list(pool.map(lambda pin: refuses(pin[0], pin[1], python), pins))
    return [name for (name, _), no in zip(pins, verdicts, strict=True) if no]


def first_admitting(name: str, python: str, after: str) -> tuple[str, str] | None:
    """(version, upload time) of the first final release after `after` that admits `python`."""
    firsts: dict[str, str] = {}
    for version, rp, when in _releases(canonicalize_name(name)):
        try:
            final = not Version(version).is_prerelease
        except InvalidVersion:
            continue
        if final and when > after and _admits(rp, python) and (version not in firsts or when < firsts[version]):
            firsts[version] = when
    if not firsts:
        return None
    version = min(firsts, key=lambda v: firsts[v])
    return version, firsts[version]
