"""Make the era's pip install the project's dependencies as of the task's date.

A recipe's install command (`pip install -e .[test]`) runs the env's own pip, which is as old as
the task and cannot apply a date: left alone it pulls today's releases of every dependency (pytest
8 and docutils 0.23 into a 2021 sphinx). So, after the pre-install steps and before the install,
the project's declared requirements are read (a PEP 621 table from pyproject.toml on the host, which
runs nothing; else `setup.py egg_info` in the sandbox, which runs the project's code), uv resolves
them with the extras the install command names and the recipe's exact pins as of the date, and the
result becomes a pip constraints file: pip still does the install, with dated versions. The project
itself is never built by uv (old setup.cfg versions such as `3.5.0.dev-20210306` are not valid
versions to today's tools).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from issuebench.config import TESTBED_PATH
from issuebench.envs.build_tools import read_toml
from issuebench.envs.dating import date_args
from issuebench.errors import IssuebenchError
from issuebench.index import upload_times
from issuebench.sandbox import OK, Limits

# `pip install [-e] .`, `.[test]`, `".[dev,test]"`, or `setup.py develop|install`: the local project.
_PIP_LOCAL = re.compile(r"\bpip\s+install\b(?P<args>[^;&|]*)")
_LOCAL_TARGET = re.compile(r"""^['"]?\.(?:/)?(?P<extras>\[[^\]]*\])?['"]?$""")
_SETUP_PY = re.compile(r"\bsetup\.py\s+(develop|install)\b")
DATED_CONSTRAINTS = ".issuebench-dated-constraints.txt"


def local_install_targets(commands: Sequence[str]) -> list[str] | None:
    """The requirement lines (`.` or `.[extras]`) the install commands install the project with,
    or None when none of them installs the local project."""
    targets: list[str] = []
    for command in commands:
        for match in _PIP_LOCAL.finditer(command):
            try:
                words = shlex.split(match.group("args"))
            except ValueError:
                continue
            for word in words:
                local = _LOCAL_TARGET.match(word)
                if local:
                    targets.append("." + (local.group("extras") or ""))
        if _SETUP_PY.search(command):
            targets.append(".")
    return list(dict.fromkeys(targets)) or None


SCRIPT = Path(__file__).with_name("declared_requirements_script.py")
# The script's exit code when the project itself declares nothing it can read (no setup.py, or its
# egg_info fails); every other end is the helper's own failure.
UNREADABLE = 3
DECLARED_LISTING = ".issuebench-declared.txt"   # in the workspace, removed once read


class HelperFailed(IssuebenchError):
    """A helper the harness runs in the sandbox ended without an answer (it could not be opened,
    crashed, or was stopped by a limit). Never read as "nothing declared"."""


@dataclass
class Declared:
    """What the declared-requirements script answered: the listing, or None and why not."""

    lines: list[str] | None
    unreadable: str = ""


def read_declared(sandbox: Any, python: str, workspace: Path, extras: Sequence[str], *, binds: Sequence[Any],
                  env: Mapping[str, str], network: bool, timeout: float) -> Declared:
    """Run the declared-requirements script in the sandbox, in the workspace (setup.py egg_info runs
    the project's code). The one place both the environment build and each instance ask it.

    Raises HelperFailed with the reason when the script gives no answer."""

    # The listing goes to a file of its own: what the interpreter says on stderr is never read as
    # a requirement, and stays in the output for the reason when there is no answer.
    listing = Path(workspace) / DECLARED_LISTING
    argv = ["bash", "-c", 'exec "$0" "$1" "$2" > "$3"', python, str(SCRIPT), ",".join(extras), DECLARED_LISTING]
    try:
        result = sandbox.run(argv, workspace=workspace, binds=binds, env=env, network=network, cwd=TESTBED_PATH,
                             limits=Limits(timeout=timeout, memory_mb=None, max_procs=None))
        text = listing.read_text(encoding="utf-8", errors="replace") if listing.is_file() else ""
    finally:
        listing.unlink(missing_ok=True)
    if result.status == OK and result.returncode == 0:
        return Declared(text.splitlines())
    said = [line.strip() for line in result.output.splitlines() if line.strip()]
    if result.status == OK and result.returncode == UNREADABLE:
        return Declared(None, said[-1] if said else "no reason given")
    detail = said[-1][:300] if said else result.reason or "no output"
    raise HelperFailed(f"{SCRIPT.name} ended without an answer (status {result.status}, exit "
                       f"{result.returncode}): {detail}")


def wanted_extras(targets: Sequence[str]) -> list[str]:
    """The extras named by install targets such as `.[test,docs]`."""
    out: list[str] = []
    for target in targets:
        if "[" in target:
            out += [e.strip().lower() for e in target[target.index("[") + 1:target.rindex("]")].split(",")]
    return [e for e in dict.fromkeys(out) if e]


def pep621_requirements(workspace: Path, extras: Sequence[str]) -> list[str] | None:
    """Requirements a static `[project]` table declares (None when it declares them dynamically),
    after a `# project: NAME` line, as the egg_info script prints them."""
    from packaging.requirements import InvalidRequirement, Requirement


    project = read_toml(workspace / "pyproject.toml").get("project")
    if not isinstance(project, dict) or "dependencies" in project.get("dynamic", []):
        return None
    name = canonicalize_name(str(project.get("name", "")))
    optional = {k.lower(): v for k, v in (project.get("optional-dependencies") or {}).items()}
    sections = {"": project.get("dependencies", []) or [], **optional}
    parsed: dict[str, list[Requirement]] = {}
    for extra, texts in sections.items():
        parsed[extra] = []
        for text in texts:
            try:
                parsed[extra].append(Requirement(str(text)))
            except InvalidRequirement:
                continue
    # An extra may name the project itself with other extras (`all = ["pkg[stats,docs]"]`): those
    # extras are wanted too, and the self-reference is no requirement of its own.
    wanted: set[str] = set()
    queue = ["", *(e.lower() for e in extras)]
    while queue:
        extra = queue.pop()
        if extra in wanted:
            continue
        wanted.add(extra)
        queue += [e.lower() for r in parsed.get(extra, []) if canonicalize_name(r.name) == name for e in r.extras]
    lines = [f"# project: {name}"]
    for extra in sorted(wanted):
        lines += [str(r) for r in parsed.get(extra, []) if canonicalize_name(r.name) != name]
    return lines


def split_listing(lines: Sequence[str]) -> tuple[list[str], str | None]:
    """The requirement lines of a declared-requirements listing (pep621_requirements or the egg_info
    script) and the project's name from its `# project: NAME` line."""
    project = next((r.split(":", 1)[1].strip() for r in lines if r.startswith("# project:")), None)
    return [r.strip() for r in lines if r.strip() and not r.startswith("#")], project


def compile_command(uv: str, python: Path, cutoff: str, per_package: Mapping[str, str],
                    requirements: Path, out: Path) -> list[str]:
    """uv's resolution of a requirements file as of the date (run on the host: it builds nothing
    of the project's, only what the index holds)."""
    return [uv, "pip", "compile", str(requirements), "--python", str(python), *date_args(cutoff, per_package),
            "--no-header", "--no-annotate", "--quiet", "-o", str(out)]


def constraint_lines(compiled: str, override: Sequence[str], exclude: str | None = None) -> list[str]:
    """`name==version` lines of a resolution, with `override` pins (the build tools) taking precedence.

    The project itself and anything not pinned by version (local paths, URLs) are left out: a
    constraint may not name them.
    """
    wins = {canonicalize_name(line.split("==")[0]): line.strip() for line in override if "==" in line}
    out = []
    for raw in compiled.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")) or "==" not in line or "@" in line:
            continue
        name = canonicalize_name(re.split(r"[=\[;\s]", line, maxsplit=1)[0])
        if name not in wins and (exclude is None or name != canonicalize_name(exclude)):
            out.append(line)
    return [*out, *wins.values()]


# A dependency whose chosen release is this much older than the date, while the year before the date
# had releases of it, was most likely held back by a resolver's order of choices rather than by a
# bound (numba 0.53 of 2021 beside numpy 1.26 of 2023: numba 0.53 declares no upper bound on numpy
# but refuses it at import).
STALE_DAYS = 730
RECENT_DAYS = 365


def held_back(compiled: str, direct: Sequence[str], cutoff: str) -> list[str]:
    """`name>=version` floors for direct dependencies the resolution took years older than the date:
    the oldest release of the year before the date."""
    from datetime import datetime, timedelta

    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion, Version


    names, capped = set(), set()
    for text in direct:
        try:
            req = Requirement(text.split(" ; ")[0])
        except InvalidRequirement:
            continue
        names.add(canonicalize_name(req.name))
        if any(spec.operator in ("==", "===", "<", "<=", "~=") for spec in req.specifier):
            capped.add(canonicalize_name(req.name))   # held back on purpose: the project's own word
    names -= capped
    when = datetime.fromisoformat(cutoff.replace("Z", "+00:00"))
    stale_before = (when - timedelta(days=STALE_DAYS)).isoformat()
    recent_after = (when - timedelta(days=RECENT_DAYS)).isoformat()
    floors = []
    for line in compiled.splitlines():
        if "==" not in line or line.lstrip().startswith("#"):
            continue
        name, version = (part.strip() for part in line.split("#")[0].split("==", 1))
        if canonicalize_name(name) not in names:
            continue
        times = upload_times(name)
        chosen = times.get(version)
        if chosen is None or chosen.replace("Z", "+00:00") >= stale_before:
            continue
        recent = []
        for v, t in times.items():
            try:
                parsed = Version(v)
            except InvalidVersion:
                continue
            if not parsed.is_prerelease and recent_after <= t.replace("Z", "+00:00") <= when.isoformat():
                recent.append(parsed)
        if recent:
            floors.append(f"{name}>={min(recent)}")
    return floors
