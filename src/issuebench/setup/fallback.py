"""`eval`/`validate --setup-fallback`: when a task's recipe fails, set up its repository version.

(When the recipe builds but the tests cannot run in it: issuebench.harness.tests_fallback decides.)

The reference shares one environment per (repository, version); so does the fallback. The first
task of a version whose recipe is missing or fails to build runs `setup` on its base commit with the
task's date; the outcome (the accepted recipe, or why none was found) is remembered under
ISSUEBENCH_HOME/setup-fallback/, so later tasks of that version, in this run or the next, use it
without searching again. A lock per version keeps parallel workers from searching twice.
"""

from __future__ import annotations

import fcntl
import json
import re
from pathlib import Path
from typing import Any

from issuebench import config
from issuebench.errors import IssuebenchError
from issuebench.models import EnvSpec, Task
from issuebench.setup.any_language import setup_repository

NOTE = "setup fallback"


def _store() -> Path:
    path = config.home() / "setup-fallback"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _key(task: Task) -> str:
    return re.sub(r"[^\w.@-]+", "__", f"{task.repo}@{task.version or task.base_commit[:12]}")


def remembered(task: Task) -> dict[str, Any] | None:
    path = _store() / f"{_key(task)}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def remembered_spec(task: Task) -> EnvSpec | None:
    """The recipe remembered for the task's version, when setup found one (no search)."""
    entry = remembered(task)
    return _spec_of(entry)[0] if entry and entry.get("accepted") and entry.get("env") else None


def _spec_of(entry: dict[str, Any]) -> tuple[EnvSpec, str]:
    spec = EnvSpec.model_validate(entry["env"])
    note = (f"{NOTE}: recipe set up from {entry.get('commit', '?')[:12]} "
            f"({entry.get('tests_passed')}/{entry.get('tests_run')} tests passed there)")
    return spec.model_copy(update={"notes": [*spec.notes, note]}), note


def fallback_spec(task: Task, source: Path, *, builder: Any = None, sandbox: Any = None,
                  why: str = "") -> tuple[EnvSpec | None, str]:
    """(the recipe setup found for the task's repository version, or None; a one-line note)."""
    store = _store()
    with (store / f".{_key(task)}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entry = remembered(task)
        if entry is None:
            entry = _search(task, source, builder, sandbox, why)
            (store / f"{_key(task)}.json").write_text(json.dumps(entry, indent=2), encoding="utf-8")
    if not entry.get("accepted"):
        return None, f"{NOTE}: no recipe for {task.repo} {task.version} ({entry.get('reason', 'unknown')})"
    return _spec_of(entry)


def _search(task: Task, source: Path, builder: Any, sandbox: Any, why: str) -> dict[str, Any]:

    try:
        result = setup_repository(source, commit=task.base_commit, date=task.created_at or None,
                                  builder=builder, sandbox=sandbox, repo_name=task.repo)
    except IssuebenchError as exc:
        return {"accepted": False, "commit": task.base_commit, "reason": exc.message, "because": why}
    return _entry(result, task.base_commit, why)


def _entry(result: Any, commit: str, why: str) -> dict[str, Any]:
    return {"accepted": result.success, "commit": commit, "because": why,
            "reason": result.reason, "env": result.spec.model_dump(mode="json") if result.spec else None,
            "tests_run": result.tests_run, "tests_passed": result.tests_passed,
            "failing_tests": result.failing_tests}


def remember_recipe(task: Task, spec: EnvSpec, commit: str, why: str, counts: dict[str, Any]) -> None:
    """Keep a recipe collect took for the task's version without a search (another version's, whose
    files read the same) as the version's fallback outcome, when none is remembered yet."""
    entry = {"accepted": True, "commit": commit, "because": why, "reason": "",
             "env": spec.model_dump(mode="json"), "tests_run": counts.get("tests_run"),
             "tests_passed": counts.get("tests_passed"), "failing_tests": []}
    _keep(task, entry)


def _keep(task: Task, entry: dict[str, Any]) -> None:
    store = _store()
    with (store / f".{_key(task)}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if remembered(task) is None:
            (store / f"{_key(task)}.json").write_text(json.dumps(entry, indent=2), encoding="utf-8")


def remember(task: Task, result: Any, commit: str) -> None:
    """Keep a setup `collect` ran for the task's version as the version's fallback outcome (when
    none is remembered yet): the fallback then uses it, or knows it failed, without searching."""
    _keep(task, _entry(result, commit, "set up by collect for this version"))
