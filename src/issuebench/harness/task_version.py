"""A task's `version` when its row has none, or one no recipe knows: read from the repository.

Rows of another generation of the format lose or change `version` (absent; a JSON number, so
"0.20" arrives as 0.2; "v5.3" against "5.3"). The version read at the base commit
(issuebench.repos.version_rule) decides, and when the recipe has no table for it, the
nearest recipe version at or below it does: the reference groups a release's development
commits with the last version it built an environment for (xarray 0.13-0.17 -> 0.12 in Lite).
Whatever was chosen is said in a note that reaches the result and the instance log.
"""

from __future__ import annotations

import re
from pathlib import Path

from issuebench.envs import (
    known_versions,
    load_recipe,
    packaged_recipes_dir,
    pick_version,
    recipe_filename,
    resolve_spec,
)
from issuebench.harness.runlog import InstanceLog
from issuebench.models import EnvSpec, Task
from issuebench.repos import find_version

NOTE_PREFIX = "version "


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def _recipe_path(task: Task, recipes_dir: Path | None) -> Path | None:
    """The recipe file resolve_spec reads for the task's repository: the user's, else the packaged."""

    for directory in (recipes_dir, packaged_recipes_dir()):
        if directory is not None and (path := Path(directory) / recipe_filename(task.repo)).is_file():
            return path
    return None


def _has_recipe(path: Path, version: str) -> bool:

    picked = pick_version(load_recipe(path), version)
    return picked is not None and picked[0] != "*"


def _same_release(row_version: str, key: str, numeric: bool = False) -> bool:
    """"v5.3" and "5.3"; with `numeric`, also "0.2" (a JSON number in an older row) and "0.20"."""
    a, b = row_version.strip().lstrip("v"), key.strip().lstrip("v")
    if a == b or not numeric:
        return a == b
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def with_repository_version(task: Task, source: Path | None,
                            recipes_dir: Path | None = None) -> tuple[Task, str | None]:
    """The task with a version its recipe knows, and a note saying how it was chosen (None when
    the row's own version was used as it is)."""

    path = _recipe_path(task, recipes_dir)
    keys = [k for k in known_versions(path) if k != "*"] if path else []
    row = (task.version or "").strip()
    if row and (path is None or not keys or _has_recipe(path, row)):
        return task, None
    found = None
    if source is not None and task.base_commit:

        found = find_version(source, task.base_commit, task.repo)
    read = f"{found.version} ({found.source})" if found else "nothing"
    at = f"the repository at {task.base_commit[:12]}"
    if row:
        same = [k for k in keys if _same_release(row, k, numeric=True)]
        if found and len(same) > 1:
            same = [k for k in same if _same_release(found.version, k)] or same
        if same:
            note = f"{NOTE_PREFIX}{same[0]}: the row's {row!r} names no recipe version; read as {same[0]!r}"
            return task.model_copy(update={"version": same[0]}), note + (f" ({at} says {read})" if found else "")
    if found is None:
        if row:
            return task, None  # nothing better: resolve_spec names the missing version
        return task, f"{NOTE_PREFIX}unknown: the row has none and {at} says nothing"
    version = found.version
    why = f"the row has {'version ' + repr(row) if row else 'no version'}; {at} says {read}"
    if path is not None and keys and not _has_recipe(path, version):
        same = [k for k in keys if _same_release(version, k)]
        version = same[0] if same else version
    if path is not None and keys and not _has_recipe(path, version):
        below = [k for k in keys if _key(k) <= _key(version)]
        if below:
            version = max(below, key=_key)
            why += f"; nearest recipe version at or below: {version}"
    return task.model_copy(update={"version": version}), f"{NOTE_PREFIX}{version}: {why}"


def resolve_with_version(task: Task, recipes_dir: Path | None, source: Path | None) -> EnvSpec:
    """resolve_spec for the task with a version its recipe knows; the choice is in spec.notes."""

    task, note = with_repository_version(task, source, recipes_dir)
    spec = resolve_spec(task, recipes_dir=recipes_dir, repo_dir=source)
    return spec.model_copy(update={"notes": [*spec.notes, note]}) if note else spec


def log_version_notes(spec: EnvSpec, log: InstanceLog) -> list[str]:
    """The spec's notes about the version (for result.json), each written to the instance log."""
    notes = [n for n in spec.notes if n.startswith(NOTE_PREFIX)]
    for note in notes:
        log.info(note)
    return notes
