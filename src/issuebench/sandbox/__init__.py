"""Run a command over a workspace: bubblewrap, no network, resource limits, whole-tree kill.

`get_sandbox()` returns the bubblewrap sandbox, or raises MissingSystemPiece saying what to
install; `get_sandbox(no_sandbox=True)` returns a runner that keeps the limits but not the
isolation. See docs/security.md for the threat model.
"""

from __future__ import annotations

from issuebench.errors import MissingSystemPiece
from issuebench.sandbox.bwrap import BASE_ENV, DEFAULT_PATH, SANDBOX_HOME, BwrapSandbox, build_argv, probe
from issuebench.sandbox.bwrap_status import parse_bwrap_status
from issuebench.sandbox.cgroups import RunCgroup
from issuebench.sandbox.git_scratch import scratch_git_binds
from issuebench.sandbox.supervise import launcher_argv, rlimits_for
from issuebench.sandbox.types import (
    FILE_LIMIT,
    MEMORY_LIMIT,
    OK,
    OUTPUT_LIMIT,
    PROCESS_LIMIT,
    SANDBOX_FAILED,
    STATUSES,
    TIMEOUT,
    Bind,
    Limits,
    RunResult,
    RunStatus,
    Sandbox,
)
from issuebench.sandbox.unsandboxed import UnsandboxedRunner

INSTALL_HINT = "install bubblewrap: apt-get install bubblewrap, or pass --no-sandbox to run unsandboxed"


def get_sandbox(no_sandbox: bool = False) -> Sandbox:
    if no_sandbox:
        return UnsandboxedRunner()
    problem = probe()
    if problem is not None:
        raise MissingSystemPiece(f"{problem}; {INSTALL_HINT}")
    return BwrapSandbox()

__all__ = [
    "BASE_ENV",
    "DEFAULT_PATH",
    "FILE_LIMIT",
    "INSTALL_HINT",
    "MEMORY_LIMIT",
    "OK",
    "OUTPUT_LIMIT",
    "PROCESS_LIMIT",
    "SANDBOX_FAILED",
    "SANDBOX_HOME",
    "STATUSES",
    "TIMEOUT",
    "Bind",
    "BwrapSandbox",
    "Limits",
    "RunCgroup",
    "RunResult",
    "RunStatus",
    "Sandbox",
    "UnsandboxedRunner",
    "build_argv",
    "get_sandbox",
    "launcher_argv",
    "parse_bwrap_status",
    "rlimits_for",
    "scratch_git_binds",
]
