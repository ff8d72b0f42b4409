"""Which setuptools, wheel and build plugins pip's isolated builds may use inside a dated env.

pip's isolated build environments fetch the newest setuptools whatever the task's date (an era's pip
cannot apply a date), and today's setuptools rejects old `develop` installs. So the builder
constrains them to the build tools the environment has (the recipe's pin or the era's), and build
plugins such as setuptools_scm to their newest release before the date. A project whose own
`[build-system] requires` rules the env's version out (pylint 2.15 asks for setuptools~=62.6) keeps
its own range instead: a constraint that contradicts it only makes the build impossible.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from issuebench.envs.uv_compile import compile_at_date

BUILD_TOOLS = ("setuptools", "wheel")
# Build plugins that old build configurations name without a version; their newest releases need a
# newer setuptools than a dated environment has.
DATED_BUILD_PLUGINS = ("setuptools_scm",)


def dated_build_tools(exclude_newer: str | None, python_version: str) -> list[str]:
    """`name==version` of each build plugin as of the date, resolved by uv (best effort)."""
    if not exclude_newer:
        return []
    minor = ".".join(python_version.split(".")[:2])
    proc = compile_at_date(DATED_BUILD_PLUGINS, exclude_newer=exclude_newer, python_version=minor)
    if proc is None:
        return []
    wanted = {canonicalize_name(n) for n in DATED_BUILD_PLUGINS}
    return [line.strip() for line in proc.stdout.splitlines()
            if "==" in line and canonicalize_name(line.split("==")[0]) in wanted]


def read_toml(path: Path) -> dict:
    """A TOML file's table, or {} when it is missing or unreadable."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def project_build_requires(workspace: Path) -> list[Requirement]:
    """The `[build-system] requires` of the project in `workspace` (empty when none or unreadable)."""
    data = read_toml(workspace / "pyproject.toml")
    out = []
    for text in data.get("build-system", {}).get("requires", []) or []:
        try:
            out.append(Requirement(str(text)))
        except InvalidRequirement:
            continue
    return out


def build_constraints(venv: Path, extra: Sequence[str] = (), workspace: Path | None = None) -> Path | None:
    """A constraints file pinning the build tools to the versions installed in `venv` (or None).

    A tool whose installed version the project's own build requirements exclude is left out.
    """
    site = sorted(venv.glob("lib/python*/site-packages"))
    if not site:
        return None
    tools = []
    for tool in BUILD_TOOLS:
        found = sorted(site[0].glob(f"{tool}-*.dist-info"))
        if found:
            tools.append(f"{tool}=={found[-1].name[len(tool) + 1:-len('.dist-info')]}")
    admitted, _ = refused_by_build(tools, project_build_requires(workspace) if workspace else [])
    pins = [*extra, *admitted]
    if not pins:
        return None
    path = venv / ".issuebench-build-constraints.txt"
    path.write_text("\n".join(pins) + "\n")
    return path


def refused_by_build(lines: list[str], build_requires: list[Requirement]) -> tuple[list[str], list[str]]:
    """(the `name==version` lines the build requirements admit, those they exclude)."""
    wanted = {canonicalize_name(r.name): r for r in build_requires}
    kept, refused = [], []
    for line in lines:
        name, _, version = line.partition("==")
        req = wanted.get(canonicalize_name(name.split("[")[0].strip()))
        ok = req is None or not req.specifier or req.specifier.contains(version.split(";")[0].strip(),
                                                                          prereleases=True)
        (kept if ok else refused).append(line)
    return kept, refused



# uv builds a project without `[build-system]` with `setuptools>=40.8.0` (the PEP 517 default).
LEGACY_BUILD_FLOOR = "40.8.0"


def legacy_build_constraints(venv: Path) -> Path | None:
    """Constraints for building an old sdist: the env's own (era's) build tools, setuptools raised to
    the oldest release uv's legacy builds accept. None when the env has no build tools."""
    from packaging.version import Version

    path = build_constraints(venv)
    if path is None:
        return None
    lines = []
    for line in path.read_text().splitlines():
        name, _, version = line.partition("==")
        if canonicalize_name(name) == "setuptools" and Version(version) < Version(LEGACY_BUILD_FLOOR):
            line = f"setuptools=={LEGACY_BUILD_FLOOR}"
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")
    return path
