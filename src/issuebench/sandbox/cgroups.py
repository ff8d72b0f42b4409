"""A per-run cgroup (v1 `pids` and `memory` hierarchies) to cap, count and kill a run's processes.

Why cgroups and not only rlimits: we usually run as root, and RLIMIT_NPROC does not apply to
root, so a fork bomb is only stopped by a pids cgroup; RLIMIT_AS breaks programs that reserve
address space they never touch, while a memory cgroup caps what is really used and records each
OOM kill. Each run's cgroup is made under the cgroup this process is already in (never beside
it), so whoever accounts for this process still accounts for the run.

When a hierarchy is missing or not writable the caller falls back to rlimits and says so.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from issuebench.procs import pid_alive

PREFIX = "issuebench-"


def _own_cgroup_paths() -> dict[str, str]:
    """controller -> this process's cgroup path, for v1 hierarchies."""
    out: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[1]:
            continue
        for controller in parts[1].split(","):
            out[controller] = parts[2]
    return out


def _v1_mounts() -> dict[str, Path]:
    """controller -> mount point of its v1 hierarchy."""
    out: dict[str, Path] = {}
    try:
        text = Path("/proc/self/mounts").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[2] != "cgroup":
            continue
        for option in fields[3].split(","):
            if option in ("pids", "memory"):
                out[option] = Path(fields[1])
    return out


def parent_dir(controller: str) -> Path | None:
    """Where this process may create a child cgroup for `controller`, or None."""
    mount = _v1_mounts().get(controller)
    own = _own_cgroup_paths().get(controller)
    if mount is None or own is None:
        return None
    path = mount / own.lstrip("/")
    if not (path / "cgroup.procs").exists() or not os.access(path, os.W_OK):
        return None
    return path


def _counter(group: Path | None, filename: str, key: str) -> int:
    """One `key value` counter from a cgroup file (0 when the group or the key is missing)."""
    if group is None:
        return 0
    try:
        for line in (group / filename).read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _procs(path: Path) -> list[int]:
    try:
        return [int(x) for x in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def sweep_stale(parent: Path) -> None:
    """Remove run cgroups left by an issuebench process that died before cleaning up."""
    with contextlib.suppress(OSError):
        for child in parent.iterdir():
            if not child.name.startswith(PREFIX):
                continue
            try:
                owner = int(child.name[len(PREFIX):].split("-", 1)[0])
            except ValueError:
                continue
            if owner != os.getpid() and not pid_alive(owner) and not _procs(child):
                with contextlib.suppress(OSError):
                    child.rmdir()


@dataclass
class RunCgroup:
    """The cgroups of one run. Create with `RunCgroup.create`, always `destroy()` after."""

    pids: Path | None = None
    memory: Path | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, max_procs: int | None, memory_mb: int | None) -> RunCgroup:
        group = cls()
        name = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:10]}"
        if max_procs is not None:
            group.pids = group._make("pids", name, {"pids.max": str(max_procs)})
        if memory_mb is not None:
            limit = str(memory_mb * 1024 * 1024)
            # memsw (memory+swap) must be raised after memory, and may be absent without swap accounting.
            group.memory = group._make("memory", name, {"memory.limit_in_bytes": limit,
                                                        "memory.memsw.limit_in_bytes": limit})
        return group

    def _make(self, controller: str, name: str, settings: dict[str, str]) -> Path | None:
        parent = parent_dir(controller)
        if parent is None:
            self.notes.append(f"{controller} cgroup not available or not writable")
            return None
        sweep_stale(parent)
        path = parent / name
        try:
            path.mkdir()
        except OSError as exc:
            self.notes.append(f"cannot create {controller} cgroup: {exc.strerror}")
            return None
        for key, value in settings.items():
            target = path / key
            if not target.exists() and key.startswith("memory.memsw"):
                continue
            try:
                target.write_text(value)
            except OSError as exc:
                self.notes.append(f"cannot set {key}: {exc.strerror}")
                with contextlib.suppress(OSError):
                    path.rmdir()
                return None
        return path

    @property
    def procs_files(self) -> list[str]:
        return [str(p / "cgroup.procs") for p in (self.pids, self.memory) if p is not None]

    def pids_limit_hits(self) -> int:
        """How many forks the pids limit refused so far."""
        return _counter(self.pids, "pids.events", "max")

    def oom_kills(self) -> int:
        return _counter(self.memory, "memory.oom_control", "oom_kill")

    def peak_memory_mb(self) -> float | None:
        if self.memory is None:
            return None
        try:
            return int((self.memory / "memory.max_usage_in_bytes").read_text()) / 2**20
        except (OSError, ValueError):
            return None

    def kill_all(self, deadline: float = 5.0) -> bool:
        """SIGKILL every process in the run's cgroups until none is left. True when empty."""
        groups = [p for p in (self.pids, self.memory) if p is not None]
        end = time.monotonic() + deadline
        pause = 0.001  # the sandbox's last processes usually leave within a millisecond or two
        while time.monotonic() < end:
            pids = {pid for g in groups for pid in _procs(g)}
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        return not any(_procs(g) for g in groups)

    def destroy(self) -> list[str]:
        """Kill what is left and remove the cgroups. Returns problems (empty when clean)."""
        problems: list[str] = []
        if not self.kill_all():
            problems.append("processes survived SIGKILL in the run's cgroup")
        for path in (self.pids, self.memory):
            if path is None:
                continue
            pause = 0.001
            for _ in range(60):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(pause)
                    pause = min(pause * 2, 0.05)
            else:
                problems.append(f"could not remove cgroup {path.name}")
        return problems
