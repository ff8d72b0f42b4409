"""One environment per version group of a repository's candidates: the row's own, a --recipe, or
issuebench.setup run at the group's environment commit (its outcome kept as the version's setup
fallback, so validate and eval do not search again)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from issuebench.collect import pipeline as P
from issuebench.collect.versions import group_by_version
from issuebench.errors import InputError
from issuebench.models import EnvSpec, Task
from issuebench.setup import lock_pinned, remember, remember_recipe, setup_fingerprint, setup_repository
from issuebench.tomlcompat import tomllib

if TYPE_CHECKING:
    from issuebench.collect.mine import CollectOptions


def load_recipe(path: Path) -> EnvSpec:
    """An EnvSpec from a TOML file: its keys at top level, or under an [env] table."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(path, f"cannot read recipe: {exc}") from exc
    data = data.get("env", data)
    try:
        return EnvSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(path, err["msg"], field=".".join(str(p) for p in err["loc"]),
                         hint="see EnvSpec in docs/architecture.md for the recipe fields") from exc


def attach_environments(repo_dir: Path, tasks: list[Task], opts: CollectOptions,
                         table: P.PipelineTable) -> list[dict]:
    """One environment per version group: the row's own, a --recipe, or issuebench.setup (whose
    outcome per group is returned, and said as it goes)."""
    recipe = load_recipe(opts.recipe) if opts.recipe else None
    groups = group_by_version(tasks)
    setups: list[dict] = []
    accepted: dict[str, tuple[EnvSpec, dict]] = {}     # what setup reads of a commit -> its recipe
    for index, group in enumerate(groups.values(), 1):
        version = group[0].version
        spec = recipe or next((t.env for t in group if t.env is not None), None)
        if spec is None and opts.run_setup:
            if opts.progress:
                opts.progress(f"setup {index}/{len(groups)}: version {version} ({len(group)} candidates) at "
                              f"{(group[0].environment_setup_commit or group[0].base_commit)[:12]}")
            started = time.monotonic()
            fingerprint = setup_fingerprint(repo_dir, group[0].environment_setup_commit or group[0].base_commit)
            if fingerprint is not None and fingerprint in accepted:
                spec, record = _reuse(accepted[fingerprint], group[0], time.monotonic() - started)
            else:
                spec, record = _setup_group(repo_dir, group[0], opts)
                # A recipe pinned to its commit's lockfile is judged again elsewhere: the
                # fingerprint reads the requirements, not the lock, which may hold other versions.
                if spec is not None and fingerprint is not None and not lock_pinned(spec.notes):
                    accepted[fingerprint] = (spec, record)
            record.update(version=version, tasks=len(group))
            setups.append(record)
            if opts.progress:
                opts.progress(f"setup {index}/{len(groups)}: "
                              + ("accepted" if record.get("accepted") else f"not accepted: {record.get('reason')}")
                              + f" ({record.get('seconds', 0):.0f}s)")
        for task in group:
            if task.env is None and spec is not None:
                task.env = spec
            if task.env is not None:
                table.add("set up")
    return setups


def _reuse(found: tuple[EnvSpec, dict], task: Task, seconds: float) -> tuple[EnvSpec, dict]:
    """The recipe of an earlier group that reads the same, held to this group's date; remembered
    as the version's setup outcome like one that was searched for."""
    spec, earlier = found
    when = task.created_at or spec.exclude_newer
    spec = spec.model_copy(update={"exclude_newer": when} if when else {}, deep=True)
    commit = task.environment_setup_commit or task.base_commit
    record = {key: earlier.get(key) for key in ("python", "tests_run", "tests_passed", "tests_skipped",
                                                 "modules_unimportable", "files_cut", "judged_on")}
    record.update(commit=commit, date=task.created_at, accepted=True, iterations=0, seconds=round(seconds, 2),
                  reused_from=earlier.get("version"),
                  reason=f"same requirements, build and test commands as version {earlier.get('version')}: "
                         "its recipe, at this version's date")
    remember_recipe(task, spec, commit, record["reason"], record)
    return spec, record


def _setup_group(repo_dir: Path, task: Task, opts: CollectOptions) -> tuple[EnvSpec | None, dict]:
    """issuebench.setup at the group's environment commit: (the accepted spec or None, a record of
    the outcome). The outcome is remembered for the version as `--setup-fallback`'s, so validate
    and eval do not search again for what collect already found (or could not)."""
    commit = task.environment_setup_commit or task.base_commit
    record: dict = {"commit": commit, "date": task.created_at}
    kwargs = {"time_limit": opts.setup_time_limit} if opts.setup_time_limit else {}
    try:
        result = setup_repository(repo_dir, commit=commit, date=task.created_at, repo_name=task.repo,
                                  progress=opts.progress, **kwargs)
    except Exception as exc:  # a group that cannot be set up stays without env; validate says why
        record.update(accepted=False, reason=f"setup failed: {exc}", seconds=0.0)
        return None, record
    summary = result.summary()
    summary.pop("recipe", None)
    record.update(summary, accepted=result.success)
    remember(task, result, commit)
    # Only an accepted recipe is a task's environment: one that failed its own judgement would
    # make validate keep or drop tasks for the environment's faults.
    return (result.spec if result.success else None), record
