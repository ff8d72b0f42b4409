"""Mine graded tasks from a repository's history: collect candidates, validate fail-to-pass.

collect(repo) -> CollectResult (task rows + pipeline table); validate(tasks) -> ValidateResult;
build_pypi_history(name) makes a git history from a project's released sdists.
"""

from issuebench.collect.environments import load_recipe
from issuebench.collect.mine import CollectOptions, CollectResult, collect
from issuebench.collect.pipeline import INSTALL_FAILED, PipelineTable, Rejection, table_path_for
from issuebench.collect.pypi_history import build_pypi_history
from issuebench.collect.test_lists import FAIL, PASS, outcome
from issuebench.collect.validation import ValidateResult, Verdict, harness_runner, validate

__all__ = [
    "FAIL",
    "INSTALL_FAILED",
    "PASS",
    "CollectOptions",
    "CollectResult",
    "PipelineTable",
    "Rejection",
    "ValidateResult",
    "Verdict",
    "build_pypi_history",
    "collect",
    "harness_runner",
    "load_recipe",
    "outcome",
    "table_path_for",
    "validate",
]
