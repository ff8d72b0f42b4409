"""The date an environment's packages are resolved as of, and the exceptions to it.

The rule: every package as of the task's date (or the interpreter's release, when that is later),
except exact pins, which win over the date. A pin published after the date needs dependencies from
its own time (pytest 7.4.0 needs an exceptiongroup that did not exist in 2021): those, and only
those the resolver names, are taken as of the newest such pin's publication.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from issuebench.envs.python_releases import python_table
from issuebench.envs.requirements import pinned_names
from issuebench.index import upload_time

if TYPE_CHECKING:
    from issuebench.models import EnvSpec

# Far enough in the future that an exempt package is never cut off.
NO_CUTOFF = "2100-01-01T00:00:00Z"
_NOT_FOUND = re.compile(r"\b([A-Za-z0-9][A-Za-z0-9._-]*) was not found in the package registry")
_YANKED = re.compile(r"\b([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s,]+) was yanked")
_REQUIRED = re.compile(r"\byou require ([A-Za-z0-9][A-Za-z0-9._-]*?)(?=[<>=!~\[,; ]|$)")
_FAILED_BUILD = re.compile(r"Failed to (?:download and )?build `([A-Za-z0-9][A-Za-z0-9._-]*)==")
_FILTERED = re.compile(r"`([A-Za-z0-9][A-Za-z0-9._-]*)` was filtered by `exclude-newer`")


def python_release_date(version: str) -> str | None:
    """The first release date (YYYY-MM-DD) of a CPython minor version, from the packaged table."""
    return python_table().get("released", {}).get(".".join(version.split(".")[:2]))


def effective_cutoff(cutoff: str | None, python_version: str) -> str | None:
    """The date resolution may use: the task's, unless the interpreter is newer than the task.

    Packages released before an interpreter existed rarely install or run on it (the era's pip
    cannot even start on it), so a 2014 task run on Python 3.9 resolves as of Python 3.9's
    release. Exact pins still win over either date.
    """
    released = python_release_date(python_version)
    if cutoff is None or released is None or released <= cutoff[:10]:
        return cutoff
    return f"{released}T00:00:00Z"


def date_args(cutoff: str | None, per_package: Mapping[str, str]) -> list[str]:
    """uv's arguments for a global cutoff with per-package exceptions."""
    if not cutoff:
        return []
    args = ["--exclude-newer", cutoff]
    for name, when in per_package.items():
        args += ["--exclude-newer-package", f"{name}={when}"]
    return args


def filtered_by_cutoff(resolver_output: str) -> list[str]:
    """Packages uv says it could not use because of the cutoff (from its hints)."""
    return list(dict.fromkeys(_FILTERED.findall(resolver_output)))


def not_on_index(resolver_output: str) -> list[str]:
    """Packages uv says the index does not have at all."""
    return list(dict.fromkeys(_NOT_FOUND.findall(resolver_output)))


def only_yanked(resolver_output: str) -> str | None:
    """`name==version` of the newest release uv refused as yanked, when it says that is all there is."""
    found = _YANKED.findall(resolver_output)
    if not found or "unsatisfiable" not in resolver_output:
        return None
    name, version = found[-1]
    return f"{name}=={version}"


def unsatisfiable_requirements(resolver_output: str) -> list[str]:
    """The requirements uv names when it concludes they cannot be satisfied."""
    if "unsatisfiable" not in resolver_output:
        return []
    return list(dict.fromkeys(_REQUIRED.findall(resolver_output)))


# pip's own words for a source build that failed (legacy `setup.py install`, or a wheel build).
_PIP_FAILED_BUILD = re.compile(
    r"Running setup\.py install for ([A-Za-z0-9][A-Za-z0-9._-]*): finished with status 'error'"
    r"|Building wheel for ([A-Za-z0-9][A-Za-z0-9._-]*) \([^)]*\): finished with status 'error'"
    r"|Failed building wheel for ([A-Za-z0-9][A-Za-z0-9._-]*)")


def pip_failed_builds(pip_output: str) -> list[str]:
    """Packages pip could not build from source, in the order it said so."""
    names = (next(filter(None, m.groups())) for m in _PIP_FAILED_BUILD.finditer(pip_output))
    return list(dict.fromkeys(canonicalize_name(n) for n in names))


def failed_builds(resolver_output: str) -> list[str]:
    """Packages uv could not build from source (its first `Failed to build` cause lines)."""
    return list(dict.fromkeys(_FAILED_BUILD.findall(resolver_output)))[:1]


def newest_pin_date(pins: Iterable[tuple[str, str]], cutoff: str) -> str | None:
    """The latest publication among exact pins published after `cutoff` (None if none is later,
    or the index cannot say)."""

    later = [when for name, version in pins
             if (when := upload_time(name, version)) is not None and when > cutoff]
    if not later:
        return None
    newest = max(later)
    # uv compares whole timestamps; a day's margin takes in files uploaded right after the pin.
    return newest[:10] + "T23:59:59Z"


def exempt_from_cutoff(spec: EnvSpec) -> dict[str, str]:
    """Packages the date does not apply to: the spec's exact pins and its named exceptions."""

    names = dict.fromkeys([*pinned_names(spec.packages), *spec.exclude_newer_exempt])
    return dict.fromkeys(names, NO_CUTOFF)


# A release numbered 9999 (or 99999, ...) is a placeholder a project leaves when it moves:
# fake-factory 9999.9.9 (December 2016) installs and raises ImportError "now called Faker" on import.
# It is never the era's release, whatever the date. A calendar version is no placeholder, however
# high: pdfminer.six 20251107 (kept below 9999, pdfplumber could not be installed at all).
PLACEHOLDER_MAJOR = 9999


def placeholder_releases(pins: Iterable[tuple[str, str]]) -> list[str]:
    """Names among (name, version) pins whose version is a placeholder's."""
    names = []
    for name, version in pins:
        if re.match(r"9{4,}(?!\d)", version) and name not in names:
            names.append(name)
    return names


def below_placeholder(name: str) -> str:
    """The requirement that keeps `name` below its placeholder release."""
    return f"{name}<{PLACEHOLDER_MAJOR}"
