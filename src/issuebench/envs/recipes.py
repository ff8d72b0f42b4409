"""Recipes: how to build and test a repository, as TOML data, one file per repository.

A recipe file is named `owner__name.toml` and looks like:

    repo = "pallets/flask"

    [defaults]                 # applied to every version (any EnvSpec field)
    test_cmd = "pytest -rA"
    log_parser = "pytest"

    [versions."2.0"]           # an exact `version` of the task ...
    python = "3.9"
    packages = ["Werkzeug==2.0.0"]

    [versions.">=2.2,<3.2"]    # ... or a version range (PEP 440 specifiers) ...
    python = "3.11"

    [versions."*"]             # ... or anything else
    python = "3.11"

Lookup for a task: the row's own `env` > the user's recipes (`--recipes DIR`) > the packaged ones;
within a file: the exact version key, then the ranges in file order, then "*".
"""

from __future__ import annotations

import functools
import subprocess
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import ValidationError

from issuebench.envs.row_kinds import spec_from_row
from issuebench.errors import InputError, IssuebenchError
from issuebench.models import EnvSpec, Task
from issuebench.tomlcompat import tomllib

_SPEC_FIELDS = set(EnvSpec.model_fields)


def recipe_filename(repo: str) -> str:
    return repo.replace("/", "__") + ".toml"


def packaged_recipes_dir() -> Path:
    return Path(str(resources.files("issuebench.envs").joinpath("recipes")))


@functools.lru_cache(maxsize=512)
def _load_file(path: Path, mtime: float) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"not valid TOML: {exc}", hint="fix the recipe file") from None
    versions = data.get("versions", {})
    if not isinstance(versions, dict):
        raise InputError(path, "must be a table of version keys", field="versions")
    for key, table in [("defaults", data.get("defaults", {})), *versions.items()]:
        unknown = set(table) - _SPEC_FIELDS
        if unknown:
            raise InputError(path, f"unknown key(s) {sorted(unknown)}; allowed: {sorted(_SPEC_FIELDS)}",
                             field=f"versions.{key}" if key != "defaults" else "defaults")
    return data


def load_recipe(path: Path) -> dict[str, Any]:
    return _load_file(path, path.stat().st_mtime)


def _version_matches(key: str, version: str) -> bool:
    if not any(c in key for c in "<>=!~,"):
        return False
    try:
        return Version(version.lstrip("v")) in SpecifierSet(key)
    except (InvalidSpecifier, InvalidVersion):
        return False


def pick_version(data: dict[str, Any], version: str | None) -> tuple[str, dict[str, Any]] | None:
    versions: dict[str, Any] = data.get("versions", {})
    if version is not None:
        if version in versions:
            return version, versions[version]
        for key, table in versions.items():
            if _version_matches(key, version):
                return key, table
    if "*" in versions:
        return "*", versions["*"]
    return None


def spec_from_recipe(path: Path, version: str | None) -> EnvSpec | None:
    """The EnvSpec a recipe file gives for `version`, or None when no key matches."""
    data = load_recipe(path)
    if not data.get("versions"):
        # A recipe of defaults alone (a user's quick override, say) serves every version.
        picked: tuple[str, dict] | None = ("*", {})
    else:
        picked = pick_version(data, version)
    if picked is None:
        return None
    key, table = picked
    fields = {**data.get("defaults", {}), **table}
    try:
        return EnvSpec(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err.get("loc", ()))
        raise InputError(path, err.get("msg", "invalid value"), field=f"versions.{key}.{loc}") from None


def known_versions(path: Path) -> list[str]:
    return list(load_recipe(path).get("versions", {}))


def _normalise_date(value: str) -> str:
    """An RFC 3339 timestamp in UTC (what uv and pip accept) from the forms datasets use."""
    text = value.strip().replace(" ", "T", 1)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return value
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def commit_date(repo_dir: Path, commit: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(repo_dir), "show", "-s", "--format=%cI", commit],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return _normalise_date(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None


def fill_exclude_newer(spec: EnvSpec, task: Task, repo_dir: Path | None = None) -> EnvSpec:
    """Set exclude_newer from the spec's exclude_newer_source. A spec that already has a date
    (a row's own env, a fixed recipe date) keeps it."""
    source = spec.exclude_newer_source
    if source == "none":
        return spec.model_copy(update={"exclude_newer": None})
    if spec.exclude_newer or source == "fixed":
        return spec.model_copy(update={"exclude_newer": _normalise_date(spec.exclude_newer)
                                       if spec.exclude_newer else None})
    notes = list(spec.notes)
    date: str | None = None
    if source == "environment_setup_commit":
        if repo_dir is not None and task.environment_setup_commit:
            date = commit_date(repo_dir, task.environment_setup_commit)
        if date is None and task.created_at:
            notes.append("exclude_newer: environment_setup_commit date unavailable here; used created_at")
    if date is None and task.created_at:
        date = _normalise_date(task.created_at)
    return spec.model_copy(update={"exclude_newer": date, "notes": notes})


def _recipe_for(repo: str, version: str | None, dirs: list[Path]) -> tuple[EnvSpec, Path] | None:
    tried: list[tuple[Path, list[str]]] = []
    for directory in dirs:
        path = directory / recipe_filename(repo)
        if not path.is_file():
            continue
        spec = spec_from_recipe(path, version)
        if spec is not None:
            return spec, path
        tried.append((path, known_versions(path)))
    if tried:
        path, versions = tried[0]
        raise IssuebenchError(
            f"no recipe for {repo} version {version!r} in {path} (it has: {', '.join(versions) or 'none'})",
            hint=f'add a [versions."{version}"] table (or a range or "*") to a recipe passed with --recipes')
    return None


def resolve_spec(task: Task, recipes_dir: Path | None = None, repo_dir: Path | None = None) -> EnvSpec:
    """The EnvSpec for a task: the row's `env` > user recipes > packaged recipes, with
    exclude_newer filled in (repo_dir, when given, lets environment_setup_commit dates be read)."""
    if task.env is not None:
        return fill_exclude_newer(task.env, task, repo_dir)
    dirs = [d for d in (recipes_dir, packaged_recipes_dir()) if d is not None]
    if recipes_dir is not None and not Path(recipes_dir).is_dir():
        raise InputError(recipes_dir, "recipes directory does not exist", hint="pass an existing folder to --recipes")
    found = _recipe_for(task.repo, task.version, [Path(d) for d in dirs])
    if found is None and (from_row := spec_from_row(task)) is not None:
        return fill_exclude_newer(from_row, task, repo_dir)
    if found is None:
        raise IssuebenchError(
            f"no environment recipe for repository {task.repo} (instance {task.instance_id})",
            hint=f"write {recipe_filename(task.repo)} and pass its folder with --recipes DIR, "
                 "or run `issuebench setup` on the repository to make one")
    spec, _path = found
    return fill_exclude_newer(spec, task, repo_dir)


def packaged_repos() -> list[str]:
    out = []
    for path in sorted(packaged_recipes_dir().glob("*.toml")):
        if path.name.startswith("_"):
            continue
        out.append(load_recipe(path).get("repo") or path.stem.replace("__", "/", 1))
    return out
