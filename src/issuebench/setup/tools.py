"""Setup's own tooling (setuptools, wheel) at the task's date, for the chosen interpreter.

Setup installs setuptools and wheel to build the repository without build isolation. Each is
pinned to its newest release before the date that supports the interpreter (resolved by uv under
the same cutoff the environment gets), so no tool of setup's own contradicts the date, and a rule's
range (`setuptools<58`) still narrows to the era's release.

One more contradiction comes from uv itself: it builds a dependency that has only an sdist with
`setuptools>=40.8.0`, which no cutoff before February 2019 admits (sympy's mpmath, say). For such
dates setuptools and wheel are exempted from the cutoff: the environment still gets the era's
release through the exact pin, while sdist builds may use a newer setuptools for the interpreter.
"""

from __future__ import annotations

import functools

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from issuebench.envs import compile_at_date, effective_cutoff
from issuebench.setup.plan import Plan
from issuebench.setup.requirements import requirement_name

TOOLS = ("setuptools", "wheel")
# uv's build requirement for a project without pyproject.toml.
UV_LEGACY_BUILD = Version("40.8.0")


@functools.lru_cache(maxsize=64)
def dated_tools(python: str, cutoff: str) -> dict[str, str]:
    """{tool: newest version before cutoff that installs on Python `python`}; empty when unknown."""

    done = compile_at_date(TOOLS, exclude_newer=cutoff, python_version=python, extra=["--no-deps"])
    if done is None:
        return {}
    out = {}
    for line in done.stdout.splitlines():
        name, _, version = line.strip().partition("==")
        if version and requirement_name(name) in TOOLS:
            out[requirement_name(name) or name] = version.strip()
    return out


def with_dated_tools(plan: Plan) -> Plan:
    """The plan with setuptools and wheel pinned to their releases at the date (when a pin fits
    the plan's own requirement), and exempted from the cutoff when uv's sdist builds need it."""
    if not plan.spec.exclude_newer:
        return plan

    cutoff = effective_cutoff(plan.spec.exclude_newer, plan.spec.python) or plan.spec.exclude_newer
    versions = dated_tools(plan.spec.python, cutoff)
    if not versions:
        return plan
    packages = []
    for req in plan.spec.packages:
        name = requirement_name(req)
        if name in versions and _admits(req, versions[name]):
            packages.append(f"{name}=={versions[name]}")
        else:
            packages.append(req)
    exempt = list(plan.spec.exclude_newer_exempt)
    if _older(versions.get("setuptools"), UV_LEGACY_BUILD):
        exempt += [t for t in TOOLS if t not in exempt]
    if packages == plan.spec.packages and exempt == plan.spec.exclude_newer_exempt:
        return plan
    return plan.copy(packages=packages, exclude_newer_exempt=exempt)


def _admits(req: str, version: str) -> bool:
    try:
        parsed = Requirement(req.split(";", 1)[0])
    except InvalidRequirement:
        return False
    if ";" in req:
        return False                 # markers were meant for another Python: keep as written
    return parsed.specifier.contains(version, prereleases=True)


def _older(version: str | None, than: Version) -> bool:
    try:
        return version is not None and Version(version) < than
    except InvalidVersion:
        return False
