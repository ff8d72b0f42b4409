"""What the harness does when a task's recipe is missing or its environment fails: ask the run's
recipe finder (`EvalOptions.setup_fallback`) for another.

The finder is `setup`'s (issuebench.setup.fallback.fallback_spec), wired in by the command line:
setup builds on the harness, so the harness never imports it; it only calls what it was given,
on the driver and on every worker alike (a module-level function travels by name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from issuebench.errors import IssuebenchError
from issuebench.harness import overlay
from issuebench.harness.workspace import create_workspace
from issuebench.models import EnvSpec, Task
from issuebench.repos import find_repo


class RecipeFinder(Protocol):
    def __call__(self, task: Task, source: Path, *, builder: Any = None, sandbox: Any = None,
                 why: str = "") -> tuple[EnvSpec | None, str]:
        """(the recipe found for the task's repository version, or None; a one-line note)."""
        ...


def _enabled(ctx: Any) -> RecipeFinder | None:
    finder = getattr(ctx, "setup_fallback", None)
    if not callable(finder) or getattr(ctx, "backend", "local") == "docker":
        return None
    return finder


def other_recipe(task: Task, ctx: Any, source: Path | None, why: str) -> EnvSpec | None:
    """The finder's recipe for the task (None when the fallback is off or finds nothing)."""
    finder = _enabled(ctx)
    if finder is None:
        return None
    try:
        repo = source or find_repo(task.repo, ctx.repos_dir, allow_clone=ctx.allow_clone)
    except IssuebenchError:
        return None
    return finder(task, repo, builder=ctx.env_builder, sandbox=ctx.sandbox, why=why)[0]


def recipe_or_reason(task: Task, ctx: Any, why: str) -> EnvSpec | str:
    """The finder's recipe, or a one-line reason there is none."""
    finder = _enabled(ctx)
    if finder is None:
        return "no setup fallback"
    try:
        source = find_repo(task.repo, ctx.repos_dir, allow_clone=ctx.allow_clone)
    except IssuebenchError as exc:
        return f"no repository to set up: {exc.message}"
    spec, note = finder(task, source, builder=ctx.env_builder, sandbox=ctx.sandbox, why=why)
    return spec if spec is not None else note.split(": ", 1)[-1]


def env_for_task(task: Task, ctx: Any, source: Path | None, spec: EnvSpec, workspace: Path) -> tuple[EnvSpec, Any]:
    """(spec, env) of the task's own recipe, or when its build fails and the fallback is on, of
    the recipe the finder gives; raises the build's error when neither builds."""
    def setup_commit_workspace() -> Path | None:
        # A missing env is built where the reference builds its environment images: at the task's
        # environment_setup_commit, so which task of a version runs first changes nothing.
        commit = task.environment_setup_commit
        if not commit or commit == task.base_commit:
            return None
        repo = source or find_repo(task.repo, ctx.repos_dir, allow_clone=ctx.allow_clone)
        return create_workspace(repo, commit, getattr(ctx, "workspaces_dir", None), repo=task.repo,
                                when=task.created_at)

    try:
        return spec, overlay.ensure_env_with_overlay(ctx.env_builder, spec, workspace, setup_commit_workspace)
    except IssuebenchError as exc:
        other = other_recipe(task, ctx, source, exc.message)
        if other is None:
            raise
        return other, overlay.ensure_env_with_overlay(ctx.env_builder, other, workspace)


__all__ = ["RecipeFinder", "env_for_task", "other_recipe", "recipe_or_reason"]
