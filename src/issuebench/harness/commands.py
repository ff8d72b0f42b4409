"""What the harness runs for an instance: the test targets and the command line, as data."""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath

from issuebench.models import EnvSpec

_DIFF_HEADER = re.compile(r"^diff --git a/(.*?) b/(.*)$", re.MULTILINE)

# Data files a test patch adds or changes are not test targets (a runner given `tests/x.toml`
# collects nothing and stops). The reference drops names ending in these; "csv" has no dot there.
NON_TEST_SUFFIXES = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml")


def files_in_diff(patch: str) -> list[str]:
    """Target paths named by a diff's `diff --git` headers, in order, without repeats."""
    seen: dict[str, None] = {}
    for _, new in _DIFF_HEADER.findall(patch or ""):
        seen.setdefault(new.strip(), None)
    return list(seen)


def test_targets(spec: EnvSpec, test_patch: str) -> list[str]:
    """The arguments that name the tests to run, the way the reference derives them."""
    files = [f for f in files_in_diff(test_patch) if not f.endswith(NON_TEST_SUFFIXES)]
    if spec.test_directives == "none":
        return []
    if spec.test_directives == "django":
        targets = []
        for path in files:
            if not path.endswith(".py"):
                continue
            parts = PurePosixPath(path[: -len(".py")]).parts
            if parts and parts[0] == "tests":
                parts = parts[1:]
            targets.append(".".join(parts))
        return targets
    if spec.test_directives == "modules":
        return [".".join(PurePosixPath(path[: -len(".py")]).parts) for path in files if path.endswith(".py")]
    return files


def test_command(spec: EnvSpec, test_patch: str) -> str:
    """The shell command line that runs the task's tests."""
    targets = test_targets(spec, test_patch)
    return " ".join([spec.test_cmd, *(shlex.quote(t) for t in targets)])


def eval_script(spec: EnvSpec, test_patch: str, nonce: str) -> str:
    """The record of what runs inside the sandbox (written as eval.sh next to the logs)."""
    lines = ["#!/bin/bash", "set -uo pipefail", "cd \"$TESTBED\""]
    lines += spec.pre_test
    lines.append(f": '>>>>> Start Test Output {nonce}' (written by the harness, outside the sandbox)")
    lines.append(test_command(spec, test_patch))
    lines.append(f": '>>>>> End Test Output {nonce}' (written by the harness, outside the sandbox)")
    return "\n".join(lines) + "\n"
