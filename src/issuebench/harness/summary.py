"""The run summary `<model>.<run_id>.json`, with the reference's keys plus our status counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from issuebench.files import write_json
from issuebench.harness.artifacts import RunLayout
from issuebench.models import InstanceReport, InstanceStatus


def build_summary(reports: Iterable[InstanceReport], *, dataset_ids: Iterable[str],
                  submitted_ids: Iterable[str]) -> dict[str, Any]:
    reports = list(reports)
    dataset_ids = list(dataset_ids)
    submitted = sorted(set(submitted_ids))
    by_status: dict[InstanceStatus, list[str]] = {}
    for r in reports:
        by_status.setdefault(r.status, []).append(r.instance_id)
    resolved = sorted(r.instance_id for r in reports if r.status is InstanceStatus.RESOLVED)
    unresolved = sorted(r.instance_id for r in reports if r.status is InstanceStatus.UNRESOLVED)
    empty = sorted(r.instance_id for r in reports if r.status is InstanceStatus.EMPTY)
    completed = sorted(resolved + unresolved)
    errors = sorted(r.instance_id for r in reports
                    if not r.status.completed and r.status is not InstanceStatus.EMPTY)
    done = set(completed) | set(empty) | set(errors)
    incomplete = sorted(i for i in dataset_ids if i not in done)
    outcomes = Counter(r.outcome.value for r in reports if r.outcome is not None)
    return {
        "total_instances": len(dataset_ids),
        "submitted_instances": len(submitted),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": len(empty),
        "error_instances": len(errors),
        "completed_ids": completed,
        "incomplete_ids": incomplete,
        "empty_patch_ids": empty,
        "submitted_ids": submitted,
        "resolved_ids": resolved,
        "unresolved_ids": unresolved,
        "error_ids": errors,
        "schema_version": 2,
        # issuebench's additions: every instance's finer status, and the paper's categories.
        "status_counts": {s.value: len(ids) for s, ids in sorted(by_status.items(), key=lambda kv: kv[0].value)},
        "status_ids": {s.value: sorted(ids) for s, ids in sorted(by_status.items(), key=lambda kv: kv[0].value)},
        "outcome_counts": dict(sorted(outcomes.items())),
    }


def write_summary(reports: Iterable[InstanceReport], *, run_id: str, model: str, output_dir: Path,
                  dataset_ids: Iterable[str], submitted_ids: Iterable[str]) -> Path:
    layout = RunLayout(Path(output_dir), run_id)
    path = layout.summary_path(model)
    write_json(path, build_summary(reports, dataset_ids=dataset_ids, submitted_ids=submitted_ids))
    return path


def add_wider_tests(path: Path, section: dict[str, Any]) -> None:
    """Put the wider-tests pass (issuebench.strength) beside the official counts, which never change:
    `wider_tests.strict_resolved_instances` is the stricter count, `breaking_ids` what it leaves out."""
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    data["wider_tests"] = section
    write_json(path, data)
