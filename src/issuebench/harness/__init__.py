"""The evaluation harness: one instance end to end, and many in parallel."""

from issuebench.harness.artifacts import (
    RunLayout,
    read_instance_result,
    write_instance_result,
)
from issuebench.harness.blob_completion import fill_exported, missing_blobs
from issuebench.harness.commands import files_in_diff, test_targets
from issuebench.harness.context import EvalContext, build_context
from issuebench.harness.docker_backend import engine_available
from issuebench.harness.guards import cut_after_runner_summary
from issuebench.harness.instance import TestRun, evaluate_instance, resolve_task_spec, run_tests, spec_for_run
from issuebench.harness.options import EvalOptions
from issuebench.harness.overlay import ensure_env_with_overlay
from issuebench.harness.remote import worker_context
from issuebench.harness.run import EvaluationResult, RunInterrupted, run_evaluation
from issuebench.harness.run_lock import run_locked
from issuebench.harness.runlog import InstanceLog
from issuebench.harness.runner_report import ARTIFACT, RunnerReport, disagreements, read_report
from issuebench.harness.staging import unfinished
from issuebench.harness.submodules import fill_submodules
from issuebench.harness.summary import add_wider_tests, write_summary
from issuebench.harness.system_check import require_system_packages
from issuebench.harness.tests_fallback import when_tests_cannot_run
from issuebench.harness.uv_cache import prune_uv_cache
from issuebench.harness.workspace import changed_paths, create_workspace, git, remove_workspace

__all__ = [
    "ARTIFACT",
    "EvalContext",
    "EvalOptions",
    "EvaluationResult",
    "InstanceLog",
    "RunInterrupted",
    "RunLayout",
    "RunnerReport",
    "TestRun",
    "add_wider_tests",
    "build_context",
    "changed_paths",
    "create_workspace",
    "cut_after_runner_summary",
    "disagreements",
    "engine_available",
    "ensure_env_with_overlay",
    "evaluate_instance",
    "files_in_diff",
    "fill_exported",
    "fill_submodules",
    "git",
    "missing_blobs",
    "prune_uv_cache",
    "read_instance_result",
    "read_report",
    "remove_workspace",
    "require_system_packages",
    "resolve_task_spec",
    "run_evaluation",
    "run_locked",
    "run_tests",
    "spec_for_run",
    "test_targets",
    "unfinished",
    "when_tests_cannot_run",
    "worker_context",
    "write_instance_result",
    "write_summary",
]
