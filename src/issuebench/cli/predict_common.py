"""What `infer` and `agent` share on the command line: picking the tasks and making the model."""

from __future__ import annotations

import warnings
from pathlib import Path

from issuebench.cli.common import check_folder, err_console, pick_instances
from issuebench.datasets import load_tasks
from issuebench.models import Task


def select_tasks(dataset: str, split: str, instance_ids: list[str] | None,
                 repos: Path | None) -> tuple[list[Task], Path | None, bool]:
    """(tasks, repos folder, whether the demo's stand-in Python rule applies)."""
    check_folder("--repos", repos)
    tasks = pick_instances(load_tasks(dataset, split=split), instance_ids)
    demo = dataset == "demo"
    if demo:
        from issuebench.demo import demo_repos_dir

        repos = repos or demo_repos_dir()
    return tasks, repos, demo


def route_warnings() -> None:
    """Library warnings (an unpriced model, say) print as one yellow line each, not a Python dump."""
    def _show(message, category, filename, lineno, file=None, line=None) -> None:  # type: ignore[no-untyped-def]
        err_console.print(f"[yellow]warning:[/] {message}", highlight=False)

    warnings.showwarning = _show
