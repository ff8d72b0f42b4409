"""benchmarks/swebench_pass.py's rows: the datasets merged by instance id, which are at hand, which run."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

GRADING_FIELDS = ("base_commit", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS", "version",
                  "environment_setup_commit")


@dataclass
class Row:
    data: dict
    datasets: list[str] = field(default_factory=list)
    differs: list[str] = field(default_factory=list)
    at_hand: bool = False

    @property
    def instance_id(self) -> str:
        return self.data["instance_id"]

    @property
    def repo(self) -> str:
        return self.data["repo"]


def _lists(value: object) -> object:
    return json.loads(value) if isinstance(value, str) and value.startswith("[") else value


def merge_rows(datasets: list[tuple[str, list[dict]]]) -> list[Row]:
    """One row per instance id, the first dataset's; the datasets it is in; the grading fields in
    which a later dataset's row differs."""
    rows: dict[str, Row] = {}
    for name, data in datasets:
        for raw in data:
            row = rows.get(raw["instance_id"])
            if row is None:
                rows[raw["instance_id"]] = Row(raw, [name])
                continue
            row.datasets.append(name)
            for key in GRADING_FIELDS:
                note = f"{key} differs in {name}"
                if _lists(row.data.get(key)) != _lists(raw.get(key)) and note not in row.differs:
                    row.differs.append(note)
    return list(rows.values())


def mark_at_hand(rows: list[Row], clones: Path) -> None:
    """A row is at hand when CLONES/owner__name holds its base commit (pull-request refs included)."""
    by_repo: dict[str, list[Row]] = {}
    for row in rows:
        by_repo.setdefault(row.repo, []).append(row)
    for repo, group in by_repo.items():
        clone = clones / repo.replace("/", "__")
        if not clone.is_dir():
            continue
        query = "".join(f"{r.data['base_commit']}^{{commit}}\n" for r in group)
        proc = subprocess.run(["git", "-C", str(clone), "cat-file", "--batch-check"], input=query,
                              capture_output=True, text=True, check=False)
        answers = proc.stdout.splitlines()
        for row, answer in zip(group, answers, strict=False):
            row.at_hand = not answer.endswith("missing")


def choose(rows: list[Row], repos: list[str], ids: list[str], limit: int | None, per_repo: int | None) -> list[Row]:
    """The rows of this pass: at hand, of the repositories and ids asked for, the first `per_repo`
    of each repository and the first `limit` in all."""
    chosen, seen = [], {}
    for row in rows:
        if not row.at_hand or (repos and row.repo not in repos) or (ids and row.instance_id not in ids):
            continue
        if per_repo is not None and seen.get(row.repo, 0) >= per_repo:
            continue
        seen[row.repo] = seen.get(row.repo, 0) + 1
        chosen.append(row)
    return chosen[:limit] if limit is not None else chosen


