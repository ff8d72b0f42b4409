"""What setup plans from at a commit, as one comparable string: two commits that read the same
install and test alike, so a recipe found for one serves the other (collect's version groups)."""

from __future__ import annotations

import json
from pathlib import Path

from issuebench.setup.extract import extract
from issuebench.setup.source import SourceTree


def setup_fingerprint(repo_dir: Path, commit: str) -> str | None:
    """All that setup plans from at a commit (requirements, build backend, Pythons, test commands
    and paths, as `extract` reads them), as one string; None when the commit cannot be read. Two
    version groups with the same fingerprint install and test alike: setup would search again
    only to find the recipe it found for the first."""
    try:
        facts = extract(SourceTree.open(repo_dir, commit))
    except Exception:  # an unreadable commit is set up (and explained) the usual way
        return None
    kept = {name: value for name, value in vars(facts).items() if name not in _NOT_PLANNED}
    return json.dumps(kept, sort_keys=True, default=sorted)


# Facts that say nothing about how to install or test: the excerpts kept for a model, and notes.
_NOT_PLANNED = {"name", "sources", "notes"}
