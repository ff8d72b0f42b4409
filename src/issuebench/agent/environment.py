"""A task's own workspace and environment, where an agent's shell commands run one at a time.

Built from the same pieces `eval` uses (the repository at the base commit, the task's recipe,
the cached environment with its install overlay, the bubblewrap sandbox with no network and
per-command limits), so what the agent sees is what its patch will be graded in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from issuebench import config
from issuebench.harness import (
    EvalContext,
    changed_paths,
    create_workspace,
    ensure_env_with_overlay,
    git,
    remove_workspace,
    resolve_task_spec,
)
from issuebench.models import Task
from issuebench.repos import find_repo
from issuebench.sandbox import RunStatus

# Never part of a submission: byte-code and caches the agent's own test runs leave behind.
_NOISE_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".tox", ".eggs"}
_NOISE_SUFFIXES = (".pyc", ".pyo")


@dataclass
class Observation:
    returncode: int | None
    output: str
    status: RunStatus  # the sandbox's: ok, timeout, memory_limit, output_limit, ...
    reason: str
    duration: float


class TaskEnvironment:
    """`start()` builds the workspace and environment; `execute()` runs one command; `diff()`."""

    def __init__(self, task: Task, ctx: EvalContext) -> None:
        self.task = task
        self.ctx = ctx
        self.workspace: Path | None = None
        self.env = None
        self._baseline: set[str] = set()

    def start(self) -> None:
        """Raises IssuebenchError (no repository, no recipe, environment failed): an infrastructure fault."""
        source = find_repo(self.task.repo, self.ctx.repos_dir, allow_clone=self.ctx.allow_clone)
        spec = resolve_task_spec(self.task, self.ctx.recipes_dir, source)
        self.workspace = create_workspace(source, self.task.base_commit, self.ctx.workspaces_dir)
        self.env = ensure_env_with_overlay(self.ctx.env_builder, spec, self.workspace)
        # What the install left in the tree (egg-info, built modules) is not the agent's work.
        self._baseline = set(changed_paths(self.workspace))

    def execute(self, command: str) -> Observation:
        assert self.workspace is not None and self.env is not None, "start() first"
        started = time.monotonic()
        res = self.ctx.sandbox.run(["bash", "-c", command], workspace=self.workspace, binds=self.env.binds(),
                                   env=self.env.run_env(), limits=self.ctx.limits, network=False,
                                   cwd=config.TESTBED_PATH)
        return Observation(res.returncode, res.output, res.status, res.reason, time.monotonic() - started)

    def diff(self) -> str:
        """The agent's changes against the base commit, as a patch `eval` applies (new files included)."""
        if self.workspace is None:
            return ""
        paths = sorted(p for p in set(changed_paths(self.workspace)) - self._baseline if not _noise(p))
        if not paths:
            return ""
        spec = "\0".join(paths)
        git(self.workspace, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", input=spec)
        # Only the agent's paths are staged, so the staged diff is exactly its work.
        return git(self.workspace, "diff", "--cached", "--binary", "HEAD").stdout

    def close(self) -> None:
        if self.workspace is not None and not self.ctx.keep_workspace:
            remove_workspace(self.workspace)
        self.workspace = None


def _noise(path: str) -> bool:
    parts = Path(path).parts
    return bool(_NOISE_PARTS.intersection(parts)) or path.endswith(_NOISE_SUFFIXES) or any(
        p.endswith(".egg-info") for p in parts)
