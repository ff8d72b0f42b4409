"""Before a run: the Debian packages the selected tasks' recipes need, and which are not installed.

Without this check each task whose recipe names an absent package (xarray's libeccodes0) ends
`env_failed`, one by one, in the middle of the run. Said once, up front, with the one command that
installs them, the run stops before anything runs (exit 2); `--install-system-deps` (as root)
installs them and goes on. Stopping is the default because those tasks' verdicts would be the
machine's, not the patches', yet the run's summary would count them; installing is one command,
and leaving those tasks out is --instance-ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from issuebench.envs import install_command, install_packages, missing_packages
from issuebench.errors import IssuebenchError, MissingSystemPiece
from issuebench.harness.instance import resolve_task_spec
from issuebench.models import Task
from issuebench.repos import find_repo

INSTALL_OPTION = "--install-system-deps"
_IDS_SHOWN = 5


@dataclass
class Shortfall:
    """Absent packages and, for each, the tasks whose recipes name it."""

    tasks_by_package: dict[str, list[str]] = field(default_factory=dict)

    @property
    def packages(self) -> list[str]:
        return list(self.tasks_by_package)

    @property
    def task_count(self) -> int:
        return len({i for ids in self.tasks_by_package.values() for i in ids})

    def describe(self) -> str:
        """`libeccodes0 (pydata__xarray-4075, pydata__xarray-4094); libfoo (a__b-1)`"""
        parts = []
        for package, ids in self.tasks_by_package.items():
            shown = ", ".join(ids[:_IDS_SHOWN]) + (f" and {len(ids) - _IDS_SHOWN} more" if len(ids) > _IDS_SHOWN else "")
            parts.append(f"{package} ({shown})")
        return "; ".join(parts)


def needed_packages(tasks: Iterable[Task], *, recipes_dir: Path | None, repos_dir: Path | None) -> dict[str, list[str]]:
    """instance_id -> the Debian packages its recipe names, for the tasks that name any.

    The recipe is resolved as the instance will resolve it, with the task's clone when it is
    already here (nothing is cloned for this). A task without a recipe is left to its own run,
    which reports that."""

    sources: dict[str, Path | None] = {}
    out: dict[str, list[str]] = {}
    for task in tasks:
        if task.repo not in sources:
            try:
                sources[task.repo] = find_repo(task.repo, repos_dir, allow_clone=False)
            except IssuebenchError:
                sources[task.repo] = None
        try:
            spec = resolve_task_spec(task, recipes_dir, sources[task.repo])
        except IssuebenchError:
            continue
        if spec.system_packages:
            out[task.instance_id] = list(spec.system_packages)
    return out


def shortfall(tasks: Iterable[Task], *, recipes_dir: Path | None, repos_dir: Path | None) -> Shortfall:
    needed = needed_packages(tasks, recipes_dir=recipes_dir, repos_dir=repos_dir)
    absent = set(missing_packages(p for names in needed.values() for p in names))
    found = Shortfall()
    for instance_id, names in needed.items():
        for package in names:
            if package in absent:
                found.tasks_by_package.setdefault(package, []).append(instance_id)
    return found


def require_system_packages(tasks: Iterable[Task], *, recipes_dir: Path | None, repos_dir: Path | None,
                            install: bool = False) -> None:
    """Raise MissingSystemPiece (one line: tasks, packages, the command) when a selected task's
    recipe needs a Debian package that is not installed; with `install`, install them first."""
    tasks = list(tasks)
    found = shortfall(tasks, recipes_dir=recipes_dir, repos_dir=repos_dir)
    if not found.tasks_by_package:
        return
    command = install_command(found.packages)
    if install:
        install_packages(found.packages, option=INSTALL_OPTION)
        found = shortfall(tasks, recipes_dir=recipes_dir, repos_dir=repos_dir)
        if not found.tasks_by_package:
            return
        raise MissingSystemPiece(f"{INSTALL_OPTION}: apt-get ran, yet still not installed: {found.describe()}",
                                 hint="see apt-get's messages above (is the package name right for this Debian?)")
    raise MissingSystemPiece(
        f"{found.task_count} of the {len(tasks)} task(s) need Debian packages that are not installed: "
        f"{found.describe()}",
        hint=f"install them as root: {command} (or rerun with {INSTALL_OPTION}, as root); "
             "nothing was run")
