"""From a kept candidate to a SWE-bench row; and which files of the checkout generators may touch."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any

from issuebench.models import Task
from issuebench.patch import is_test_path
from issuebench.synth.base import Candidate
from issuebench.synth.coverage_map import CoverageMap
from issuebench.synth.issue_text import model_issue, write_issue
from issuebench.synth.validate import Outcome
from issuebench.synth.workbench import SCRATCH, base_command


def python_files(root: Path, cmap: CoverageMap) -> dict[str, str]:
    """Tracked non-test Python files that the suite executed: where a bug can be caught at all."""
    proc = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(root), "ls-files", "*.py"],
                          capture_output=True, text=True)
    out = {}
    for rel in proc.stdout.split():
        if rel.startswith(SCRATCH) or is_test_path(rel) or rel not in cmap.lines:
            continue
        try:
            out[rel] = (root / rel).read_bytes().decode()
        except (OSError, UnicodeDecodeError):
            continue
    return out


def nearest_tag(repo: Path, commit: str) -> str:
    proc = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(repo), "describe", "--tags", "--abbrev=0",
                           commit], capture_output=True, text=True)
    return proc.stdout.strip().lstrip("v") if proc.returncode == 0 and proc.stdout.strip() else "0"


def row_test_cmd(test_cmd: str, root: Path, tests: list[str]) -> str:
    """The recipe's test command limited to the files holding the task's tests.

    `eval` runs this instead of the whole suite; every listed test is in those files. Giving the
    env a new test command keeps its hash (the test command is not part of it).
    """
    files = sorted({t.split("::")[0] for t in tests})
    return shlex.join([*base_command(test_cmd, root), *files])


def make_row(run: Any, cand: Candidate, result: Outcome, instance_id: str, broken: str) -> dict:
    changed = {c.path for c in cand.changes}
    statement = None
    if run.opts.client is not None and run.opts.options.get("model_issues", True):
        statement = model_issue(run.opts.client, result.FAIL_TO_PASS, result.output, changed)
    statement = statement or write_issue(result.FAIL_TO_PASS, result.output, changed)
    tests = [*result.FAIL_TO_PASS, *result.PASS_TO_PASS]
    env = run.spec
    if run.opts.options.get("row_scope", "files") == "files":
        env = env.model_copy(update={"test_cmd": row_test_cmd(env.test_cmd, run.bench().ws, tests)})
    task = Task(
        instance_id=instance_id, repo=run.name, base_commit=broken,
        patch=run.repo.gold_patch(broken, run.commit), test_patch="", problem_statement=statement,
        hints_text="", created_at=run.date, version=nearest_tag(run.source, run.commit),
        environment_setup_commit=run.commit, FAIL_TO_PASS=result.FAIL_TO_PASS,
        PASS_TO_PASS=result.PASS_TO_PASS, env=env,
    )
    row = task.model_dump(mode="json", exclude_none=True)
    row["synth"] = {"generator": cand.generator, "functions": [f"{p}::{q}" for p, q, _a, _b in cand.functions],
                    "parts": cand.parts, "candidate": cand.id}
    return row
