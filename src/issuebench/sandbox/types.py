"""The sandbox's records: what limits a run gets, what it may see, and what came of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from issuebench.config import TESTBED_PATH
from issuebench.models import StrStatus


class RunStatus(StrStatus):
    """How a run ended (RunResult.status); each limit has its own so a report can say what to change."""

    OK = "ok"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    PROCESS_LIMIT = "process_limit"
    OUTPUT_LIMIT = "output_limit"
    FILE_LIMIT = "file_limit"
    SANDBOX_FAILED = "sandbox_failed"


OK = RunStatus.OK
TIMEOUT = RunStatus.TIMEOUT
MEMORY_LIMIT = RunStatus.MEMORY_LIMIT
PROCESS_LIMIT = RunStatus.PROCESS_LIMIT
OUTPUT_LIMIT = RunStatus.OUTPUT_LIMIT
FILE_LIMIT = RunStatus.FILE_LIMIT
SANDBOX_FAILED = RunStatus.SANDBOX_FAILED
STATUSES = tuple(RunStatus)


@dataclass
class Limits:
    timeout: float = 1800.0              # wall clock seconds; kills the whole process tree
    memory_mb: int | None = 4096         # per-run memory cgroup, else RLIMIT_AS
    max_procs: int | None = 256          # per-run pids cgroup, else RLIMIT_NPROC (not for root)
    # Output kept: its start and, past this, its last quarter (a runner's summary comes last);
    # a run printing OUTPUT_STOP_FACTOR times as much is stopped.
    max_output_bytes: int = 20_000_000
    max_file_mb: int | None = 1024       # RLIMIT_FSIZE


@dataclass
class Bind:
    src: Path
    dst: str | None = None               # default: same path as src
    writable: bool = False


@dataclass
class RunResult:
    returncode: int | None
    output: str                          # stdout+stderr interleaved (also written to output_path)
    status: RunStatus                    # a plain string is taken as its member
    reason: str
    duration: float
    # How each limit was enforced, e.g. "memory=cgroup pids=cgroup fsize=rlimit".
    enforcement: str = ""
    output_bytes: int = 0
    sandbox: str = ""
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.status = RunStatus(self.status)

    @property
    def ok(self) -> bool:
        return self.status == RunStatus.OK


class Sandbox(Protocol):
    name: str

    def run(self, argv: list[str], *, workspace: Path, binds: Sequence[Bind] = (),
            env: Mapping[str, str] | None = None, limits: Limits | None = None,
            network: bool = False, cwd: str = TESTBED_PATH,
            output_path: Path | None = None) -> RunResult: ...
