"""The pipeline table: how many candidates survive each stage, and why the others did not.

The SWE-bench paper reports its funnel (PRs -> with tests and issue -> installable -> validated);
this is the same table for one collect + validate run, written next to the output as JSON and
shown as a table.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench.models import StrStatus


class Rejection(StrStatus):
    """Why a candidate was not kept: one vocabulary for collect and validate."""

    NO_LINKED_ISSUE = "no linked issue"
    API_FAILED = "issue lookup failed"  # --require-issue, and the API did not answer
    NO_TEST_CHANGE = "no test change"
    NO_CODE_CHANGE = "no code change"
    COMMENTS_ONLY = "test change is only comments"
    DIFF_FAILED = "diff failed"  # the clone lacks an object the candidate's diff needs
    INSTALL_FAILED = "install failed"
    GOLD_DOES_NOT_APPLY = "gold does not apply"
    TEST_PATCH_DOES_NOT_APPLY = "test patch does not apply"
    NO_FAIL_TO_PASS = "no fail-to-pass test"
    GOLD_BREAKS_TESTS = "gold breaks tests"
    TIMEOUT = "timeout"
    RUN_FAILED = "test run failed"


NO_LINKED_ISSUE = Rejection.NO_LINKED_ISSUE
API_FAILED = Rejection.API_FAILED
NO_TEST_CHANGE = Rejection.NO_TEST_CHANGE
NO_CODE_CHANGE = Rejection.NO_CODE_CHANGE
COMMENTS_ONLY = Rejection.COMMENTS_ONLY
DIFF_FAILED = Rejection.DIFF_FAILED
INSTALL_FAILED = Rejection.INSTALL_FAILED
GOLD_DOES_NOT_APPLY = Rejection.GOLD_DOES_NOT_APPLY
TEST_PATCH_DOES_NOT_APPLY = Rejection.TEST_PATCH_DOES_NOT_APPLY
NO_FAIL_TO_PASS = Rejection.NO_FAIL_TO_PASS
GOLD_BREAKS_TESTS = Rejection.GOLD_BREAKS_TESTS
TIMEOUT = Rejection.TIMEOUT
RUN_FAILED = Rejection.RUN_FAILED

STAGES = ("commits scanned", "candidates", "with tests", "with statement", "set up", "validated",
          "kept")


@dataclass
class PipelineTable:
    counts: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)
    flaky_tests: int = 0
    problem_sources: Counter = field(default_factory=Counter)

    def add(self, stage: str, n: int = 1) -> None:
        self.counts[stage] += n

    def reject(self, reason: Rejection | str) -> None:
        self.rejected[reason] += 1

    def merge(self, other: PipelineTable) -> PipelineTable:
        """This table carried on by a later stage's: a stage both count (collect's trial setup and
        validate's real one, say) takes the later count; rejections add up."""
        merged = PipelineTable()
        merged.counts.update(self.counts)
        for stage, n in other.counts.items():
            merged.counts[stage] = n  # the later stage's count wins
        for table in (self, other):
            merged.rejected.update(table.rejected)
            merged.problem_sources.update(table.problem_sources)
            merged.flaky_tests += table.flaky_tests
        return merged

    def to_dict(self) -> dict[str, Any]:
        return {
            "stages": {stage: self.counts.get(stage, 0) for stage in STAGES if stage in self.counts},
            "rejected": dict(sorted(self.rejected.items())),
            "flaky_tests_dropped": self.flaky_tests,
            "problem_sources": dict(sorted(self.problem_sources.items())),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PipelineTable:
        table = cls()
        table.counts.update(data.get("stages", {}))
        table.rejected.update(data.get("rejected", {}))
        table.problem_sources.update(data.get("problem_sources", {}))
        table.flaky_tests = int(data.get("flaky_tests_dropped", 0))
        return table

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    def rows(self) -> list[tuple[str, str]]:
        rows = [(stage, str(self.counts[stage])) for stage in STAGES if stage in self.counts]
        rows += [(f"  rejected: {reason}", str(n)) for reason, n in sorted(self.rejected.items())]
        if self.flaky_tests:
            rows.append(("  flaky tests dropped", str(self.flaky_tests)))
        rows += [(f"  statement from {src}", str(n)) for src, n in sorted(self.problem_sources.items())]
        return rows

    def markdown(self) -> str:
        lines = ["| stage | count |", "|---|---:|"]
        lines += [f"| {name} | {value} |" for name, value in self.rows()]
        return "\n".join(lines)


def table_path_for(output: Path) -> Path:
    """Where the table of an output file goes: tasks.jsonl -> tasks.pipeline.json."""
    return output.with_name(output.name.rsplit(".", 1)[0] + ".pipeline.json")
