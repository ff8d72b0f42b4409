"""Analysis of runs and datasets: statistics, report, compare, audit, contamination probes, HTML.

Pure functions over run folders and task lists; the CLI verbs in cli/analysis_cmd.py are thin.
"""

from __future__ import annotations

from issuebench.analysis.audit import dynamic_check, harness_evaluator
from issuebench.analysis.audit_report import audit_json, audit_tasks, audit_text
from issuebench.analysis.compare import compare_runs, comparison_json, comparison_markdown, comparison_text
from issuebench.analysis.contamination import (
    date_split,
    near_duplicates,
    rename_task_and_repository,
    reword_task,
)
from issuebench.analysis.formats import render
from issuebench.analysis.report import SystemSummary, report_from_paths, to_rich_tables
from issuebench.analysis.runs import load_runs
from issuebench.analysis.tasks import load_dataset

__all__ = [
    "SystemSummary",
    "audit_json",
    "audit_tasks",
    "audit_text",
    "compare_runs",
    "comparison_json",
    "comparison_markdown",
    "comparison_text",
    "date_split",
    "dynamic_check",
    "harness_evaluator",
    "load_dataset",
    "load_runs",
    "near_duplicates",
    "rename_task_and_repository",
    "render",
    "report_from_paths",
    "reword_task",
    "to_rich_tables",
]
