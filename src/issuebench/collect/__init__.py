"""Mine graded tasks from a repository's history: collect candidates, validate fail-to-pass.

collect(repo) -> CollectResult (task rows + pipeline table); validate(tasks) -> ValidateResult;
build_pypi_history(name) makes a git history from a project's released sdists.
"""

from issuebench.collect.mine import CollectOptions, CollectResult, collect

__all__ = ["CollectOptions", "CollectResult", "collect"]
