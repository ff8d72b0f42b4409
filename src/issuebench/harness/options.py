"""A run's options: one frozen object, built once by the command, from which every context is made.

The driver and each executor worker turn the same EvalOptions into an EvalContext with
harness.context.build_context, so an option cannot reach one and miss the other: a worker gets
the object itself, never a copy of some of its fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from issuebench.harness.recipe_fallback import RecipeFinder


@dataclass(frozen=True)
class EvalOptions:
    """Everything a run is asked to do, as the user gave it (paths must exist on every node)."""

    output_dir: Path
    run_id: str
    timeout: float = 1800.0  # seconds the tests of one instance may run
    repos_dir: Path | None = None
    recipes_dir: Path | None = None
    no_sandbox: bool = False
    strict: bool = False  # XFAIL/SKIPPED count as FAIL_TO_PASS failures
    flaky_reruns: int = 1  # repeats of a run that fails only PASS_TO_PASS tests (harness.flaky)
    allow_clone: bool = True
    use_cache: bool = True
    python_fallback: str = "error"  # error | nearest
    memory_mb: int | None = None  # None: the sandbox's default limit
    backend: str = "local"  # local | docker
    keep_workspaces: bool = False
    offline: bool = False  # no network at all, neither clones nor package downloads (uv's cache only)
    # When a task's recipe is missing or fails to build: the recipe finder to ask instead (the
    # command line gives setup's, issuebench.setup.fallback.fallback_spec, remembered per version
    # and said in the result's notes); None: no fallback. A module-level function travels by name.
    setup_fallback: RecipeFinder | None = None
