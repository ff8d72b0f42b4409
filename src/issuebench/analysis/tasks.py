"""Loading a dataset for analysis, through issuebench.datasets."""

from __future__ import annotations

from pathlib import Path

from issuebench.datasets import load_tasks
from issuebench.models import Task


def load_dataset(source: str | Path) -> list[Task]:
    """Tasks to analyse: rows without test lists are loaded too (an audit reports them)."""

    return load_tasks(source, require_tests=False)

