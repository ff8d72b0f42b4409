"""A run's context: what every instance shares (the options, the sandbox, the environment builder,
the limits, where artifacts go), made from the run's EvalOptions by build_context alone.

The driver and every executor worker call the same build_context on the same options, so what the
context holds cannot differ between them but for the folder artifacts are written to.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from issuebench.envs import EnvBuilder
from issuebench.harness.artifacts import RunLayout
from issuebench.harness.options import EvalOptions
from issuebench.harness.workspace import sweep_stale_workspaces
from issuebench.sandbox import Limits, get_sandbox

if TYPE_CHECKING:  # the builder and the sandbox are imported when a context is made, not before
    from issuebench.envs import EnvBuilder
    from issuebench.harness.recipe_fallback import RecipeFinder
    from issuebench.sandbox import Limits, Sandbox


@dataclass
class EvalContext:
    """Everything an instance needs from the run, made by build_context alone."""

    options: EvalOptions
    layout: RunLayout
    sandbox: Sandbox
    env_builder: EnvBuilder
    limits: Limits
    workspaces_dir: Path | None = None

    # What the instance code reads, straight from the options (one source, nothing to keep in step).
    @property
    def repos_dir(self) -> Path | None:
        return self.options.repos_dir

    @property
    def recipes_dir(self) -> Path | None:
        return self.options.recipes_dir

    @property
    def strict(self) -> bool:
        return self.options.strict

    @property
    def flaky_reruns(self) -> int:
        return self.options.flaky_reruns

    @property
    def allow_clone(self) -> bool:
        return self.options.allow_clone and not self.options.offline

    @property
    def use_cache(self) -> bool:
        return self.options.use_cache

    @property
    def keep_workspace(self) -> bool:
        return self.options.keep_workspaces

    @property
    def backend(self) -> str:
        return self.options.backend

    @property
    def setup_fallback(self) -> RecipeFinder | None:
        return self.options.setup_fallback


def build_context(options: EvalOptions) -> EvalContext:
    """Everything a run shares, made from its options: the only way to an EvalContext, on the
    driver and on every worker. Raises MissingSystemPiece once, before any instance starts."""

    # The docker backend runs tests in the reference's images; no local sandbox is needed then.
    sandbox = get_sandbox(no_sandbox=options.no_sandbox or options.backend == "docker")
    sweep_stale_workspaces()  # what a killed run left behind
    limits = (Limits(timeout=options.timeout) if options.memory_mb is None
              else Limits(timeout=options.timeout, memory_mb=options.memory_mb))
    builder = EnvBuilder(sandbox=sandbox, python_fallback=options.python_fallback, offline=options.offline)
    return EvalContext(options=options, layout=RunLayout(Path(options.output_dir), options.run_id),
                       sandbox=sandbox, env_builder=builder, limits=limits)
