"""Constraints that make the era's pip install a local project's requirements as of the date.

A recipe's `pip install -e .` resolves the project's own requirements with pip, which knows no
cutoff; these constraints (PIP_CONSTRAINT) hold them to their releases as of `exclude_newer`
(the rules are in dated_install.py). Phases, in order:
1. read what the project declares (its pyproject's tables, or the declared-requirements script
   run in the sandbox);
2. resolve it as of the date with the recipe's versioned entries (pins and bounds), or without
   them when the two contradict;
3. lift what the first resolution held years behind the date, when a later release still fits;
4. write the constraints file into the venv, the build-tool pins overriding;
5. after an install that failed to build a constrained package from source (the date's release
   has no wheel for this interpreter), take that package's first wheel for it and write again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from issuebench.envs.build_log import BuildLog, StepFailed
from issuebench.envs.build_tools import project_build_requires, refused_by_build
from issuebench.envs.dated_install import (
    DATED_CONSTRAINTS,
    HelperFailed,
    constraint_lines,
    held_back,
    pep621_requirements,
    read_declared,
    split_listing,
    wanted_extras,
)
from issuebench.envs.dated_packages import DatedPackages, first_wheel_date
from issuebench.envs.dating import exempt_from_cutoff, pip_failed_builds
from issuebench.envs.requirements import direct_reference_name, unquote
from issuebench.models import EnvSpec

_VERSIONED = re.compile(r"[<>=!~]=?\s*\d")


@dataclass
class InstallSite:
    """Where the install commands run: the spec, its venv and workspace, the sandbox with its binds
    and variables, and the build's log."""

    spec: EnvSpec
    venv: Path
    workspace: Path
    sandbox: Any
    binds: list[Any]
    run_env: dict[str, str]
    log: BuildLog
    network: bool
    timeout: float


def dated_constraints(site: InstallSite, dated: DatedPackages, targets: list[str], build: Path | None) -> Path | None:
    """The constraints file for the install of `targets` (phases 1-4 of the module docstring);
    None, with a note, when the requirements cannot be read or resolved."""
    listing = _declared(site, wanted_extras(targets))
    if listing is None:
        return None
    requirements, project = split_listing(listing)
    declared = [direct_reference_name(r) or r for r in requirements]
    # Every entry of the recipe's with a version in it, not only exact pins: what the packages step
    # installed must still hold after the project's install (astropy-8707's `pytest<7.2`, taken in
    # place of the recipe's pytest 7.4 pin, was upgraded back to 7.4 by `pip install -e .[test]`).
    versioned = [unquote(p) for p in site.spec.packages if p.strip() and _VERSIONED.search(p)]
    compiled = _resolved(site, dated, declared, versioned)
    if compiled is None:
        site.log.note("# cutoff: the install's own requirements could not be resolved as of the date; "
                      "the install resolves them itself")
        return None
    compiled = _without_held_back(site, dated, compiled, declared, versioned)
    return _written(site, compiled, build, project)


def with_wheels(site: InstallSite, dated: DatedPackages, targets: list[str], build: Path | None,
                install_output: str) -> Path | None:
    """Phase 5: new constraints when the failed install's source builds were of constrained packages
    that have a later wheel for this interpreter; None when there is nothing to change. astropy 3.1
    under Python 3.9: the date's matplotlib 3.3.2 has no cp39 wheel and its source build downloads
    FreeType, which the build cannot reach; 3.3.3 has one."""
    written = site.venv / DATED_CONSTRAINTS
    pinned = {canonicalize_name(line.split("==")[0]) for line in written.read_text().splitlines()
              if "==" in line} if written.is_file() else set()
    python, cutoff = str(site.venv / "bin" / "python"), str(site.spec.exclude_newer)
    lifted = {name: when for name in pip_failed_builds(install_output)
              if name in pinned and name not in site.log.cutoff_exceptions
              and (when := first_wheel_date(name, python, cutoff)) is not None}
    if not lifted:
        return None
    site.log.cutoff_exceptions.update(lifted)
    site.log.note(f"# cutoff: {', '.join(lifted)} taken as the first wheel for this interpreter "
                  f"({', '.join(w[:10] for w in lifted.values())}): the install could not build the "
                  "release of the date")
    return dated_constraints(site, dated, targets, build)


def _declared(site: InstallSite, extras: list[str]) -> list[str] | None:
    """Phase 1: the project's declared requirements, from its pyproject or else read in the sandbox."""
    declared = pep621_requirements(site.workspace, extras)
    if declared is not None:
        return declared
    python = site.venv / "bin" / "python"
    site.log.write(f"$ (sandbox, network={site.network}) {python} <declared requirements script> "
                   f"{','.join(extras)}")
    try:
        answer = read_declared(site.sandbox, str(python), site.workspace, extras, binds=site.binds,
                               env=site.run_env, network=site.network, timeout=site.timeout)
    except HelperFailed as exc:
        # The harness's own helper failed: no reason to believe the project declares nothing.
        raise StepFailed(f"the project's declared requirements could not be read: {exc.message}") from None
    if answer.lines is None:
        site.log.note(f"# cutoff: the project's declared requirements could not be read ({answer.unreadable}); "
                      "its install resolves them itself")
        return None
    site.log.write("\n".join(answer.lines))
    return answer.lines


def _resolved(site: InstallSite, dated: DatedPackages, declared: list[str], versioned: list[str]) -> str | None:
    """Phase 2: with the recipe's versioned entries first; when they contradict the project (sphinx's setup.py,
    once edited, wants Jinja2<3.0 beside a Jinja2==3.0.3 pin), without them, leaving the packages
    they name to pip as the install would without us."""
    compiled = _resolve(site, dated, [*declared, *versioned])
    if compiled is None and versioned:
        compiled = _resolve(site, dated, declared)
        if compiled is not None:
            named = {canonicalize_name(n) for n in _names(versioned)}
            compiled = "\n".join(line for line in compiled.splitlines()
                                  if canonicalize_name(line.split("==")[0].strip()) not in named)
    return compiled


def _names(entries: list[str]) -> list[str]:
    """The packages the entries name (a bound as well as a pin: `pytest<7.2` is pytest's)."""
    names = []
    for entry in entries:
        try:
            names.append(Requirement(entry).name)
        except InvalidRequirement:
            continue   # not a requirement pip would read either: it constrains nothing
    return names


def _without_held_back(site: InstallSite, dated: DatedPackages, compiled: str, declared: list[str],
                       versioned: list[str]) -> str:
    """Phase 3: the releases held years behind the date asked for as floors, when they fit."""
    floors = held_back(compiled, declared, str(site.spec.exclude_newer))
    if not floors:
        return compiled
    fresher = _resolve(site, dated, [*declared, *versioned, *floors])
    if fresher is None and len(floors) > 1:   # keep the floors that fit on their own
        floors = [f for f in floors if _resolve(site, dated, [*declared, *versioned, f])]
        fresher = _resolve(site, dated, [*declared, *versioned, *floors]) if floors else None
    if fresher is None:
        return compiled
    site.log.note(f"# cutoff: {', '.join(floors)} asked for: the first resolution held them years behind "
                  "the date, and a release of the year before the date fits")
    return fresher


def _written(site: InstallSite, compiled: str, build: Path | None, project: str | None) -> Path:
    """Phase 4: the constraints file, the isolated builds' tool pins overriding the resolution."""
    override = build.read_text().splitlines() if build is not None else []
    lines, refused = refused_by_build(constraint_lines(compiled, override, exclude=project),
                                      project_build_requires(site.workspace))
    if refused:
        # PIP_CONSTRAINT reaches the isolated build's pip too: a pin the project's own build
        # excludes (astropy 5.0 builds with cython==0.29.22; the date's cython is 0.29.28) would
        # make every build impossible to resolve. The install itself does not need the pin.
        site.log.note("# builds: left out of the install's constraints, as the project's [build-system] "
                      f"requires exclude them: {', '.join(refused)}")
    dated = site.venv / DATED_CONSTRAINTS
    dated.write_text("\n".join(lines) + "\n")
    site.log.write(f"# the install's requirements constrained to their releases as of {site.spec.exclude_newer}: "
                   f"{', '.join(lines)}")
    return dated


def _resolve(site: InstallSite, dated: DatedPackages, requirements: list[str]) -> str | None:
    """uv's resolution of `requirements` as of the spec's date, as `name==version` lines."""
    return dated.resolve(site.venv / "bin" / "python", str(site.spec.exclude_newer),
                         {**exempt_from_cutoff(site.spec), **site.log.cutoff_exceptions}, requirements, site.log,
                         "resolving the install's requirements as of the date")
