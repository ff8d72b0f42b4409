"""What benchmarks/swebench_pass.py measures about the processes it starts and the disk they leave.

- A child's CPU: the usage of a cgroup of its own (v1 cpuacct, else v2's cpu.stat) that the child
  is put in before it starts; everything it starts stays in it. resource.getrusage(RUSAGE_CHILDREN)
  is read too, but it misses the tests: the kernel adds a process's usage to its parent's only
  when the parent waits for it, and bubblewrap with a PID namespace does not hand its sandboxed
  processes' usage on (a sandboxed 2.5 s of CPU showed as 0.1 s). Without a writable cgroup the
  rusage figure is all there is, and the result says so (`cpu_source`).
- Peak memory two ways: ru_maxrss of the children (the largest single process, not a sum), and
  the process tree's proportional set size (PSS, shared pages split between the processes that
  share them) summed, sampled every second.
- Disk: bytes on disk of folders, each inode counted once, so hard links between uv's cache and
  the environments are not counted twice in a total.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path


@dataclass
class ChildUsage:
    """What one child process and its descendants used."""
    wall_seconds: float
    cpu_seconds: float      # user + system time of the child and all it started
    user_seconds: float     # the split, from rusage (tick-sampled in a v1 cgroup: not used for totals)
    sys_seconds: float
    max_rss_kib: int        # the largest single process (ru_maxrss of the children: KiB on Linux)
    tree_pss_peak_kib: int  # the sampled peak of the whole tree's summed PSS
    returncode: int | None
    interrupted: bool = False
    cpu_source: str = "rusage"        # "cgroup" when user/sys come from the child's own cgroup
    rusage_core_seconds: float = 0.0  # what RUSAGE_CHILDREN saw (without the sandboxed processes)

    def as_dict(self) -> dict:
        return {**asdict(self), "core_seconds": round(self.cpu_seconds, 3)}


def usage_delta(before: resource.struct_rusage, after: resource.struct_rusage) -> tuple[float, float]:
    """(user, sys) seconds spent by the children waited for between two RUSAGE_CHILDREN readings."""
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


class CpuCgroup:
    """A cgroup of one child and all it starts, read for their CPU time (v1 cpuacct or v2)."""

    def __init__(self, path: Path, version: int) -> None:
        self.path, self.version = path, version

    @classmethod
    def create(cls) -> CpuCgroup | None:
        """A new cgroup under this process's own, or None where none can be made."""
        for version, mount, own in _cpu_hierarchies():
            path = mount / own.lstrip("/") / f"issuebench-pass-{uuid.uuid4().hex[:12]}"
            try:
                path.mkdir()
            except OSError:
                continue
            return cls(path, version)
        return None

    def join(self) -> None:
        """Put the calling process in the group (run between fork and exec)."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def cpu_seconds(self) -> float:
        """CPU time of every process that was in the group. v1's cpuacct.usage is exact; its
        usage_user and usage_sys are sampled at ticks (a busy loop of 2.0 s read 2.4, most as system)."""
        if self.version == 1:
            return int((self.path / "cpuacct.usage").read_text()) / 1e9
        stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
        return int(stat["usage_usec"]) / 1e6

    def remove(self) -> None:
        for _ in range(50):  # the last processes may still be leaving
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)


def _cpu_hierarchies() -> list[tuple[int, Path, str]]:
    """(version, mount point, this process's path in it): v1 cpuacct first, then v2."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    paths = {}
    for line in own:
        _hierarchy, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    found = []
    for line in mounts:
        fields = line.split()
        if len(fields) < 4:
            continue
        if fields[2] == "cgroup" and "cpuacct" in fields[3].split(",") and "cpuacct" in paths:
            found.insert(0, (1, Path(fields[1]), paths["cpuacct"]))
        elif fields[2] == "cgroup2" and "" in paths:
            found.append((2, Path(fields[1]), paths[""]))
    return found


def descendants(root: int, parents: Mapping[int, int]) -> set[int]:
    """`root` and every process whose chain of parents leads to it (`parents`: pid -> ppid)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.add(pid)
        todo.extend(children.get(pid, ()))
    return found


def _process_table() -> dict[int, int]:
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile
        # The command name may hold spaces and parentheses: the fields start after the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        table[int(entry.name)] = int(fields[1])
    return table


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    try:  # no smaps_rollup (old kernel) or not readable: the resident set
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError):
        return 0


class TreeMemorySampler:
    """Samples the summed PSS of a process tree every `interval` seconds in a thread; keeps the peak."""

    def __init__(self, root: int, interval: float = 1.0) -> None:
        self.root, self.interval, self.peak_kib = root, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> TreeMemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                tree = descendants(self.root, _process_table())
                self.peak_kib = max(self.peak_kib, sum(_pss_kib(pid) for pid in tree))
            except OSError:
                pass
            self._stop.wait(self.interval)


def run_measured(argv: Sequence[str], *, env: Mapping[str, str], log: Path) -> ChildUsage:
    """Run argv as a child, output appended to `log`, and measure it.

    Ctrl-C or SIGTERM given to this process reaches the child as Ctrl-C (eval keeps its finished
    instances and exits), and the child is waited for, so its usage is still counted.
    """
    group = CpuCgroup.create()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    interrupted = False
    previous_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"$ {' '.join(argv)}\n")
            out.flush()
            # Joined between fork and exec, so that nothing the child starts is outside the group.
            proc = subprocess.Popen(list(argv), env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                                    preexec_fn=partial(_child_setup, group))
            with TreeMemorySampler(proc.pid) as sampler:
                while True:
                    try:
                        proc.wait()
                        break
                    except KeyboardInterrupt:
                        interrupted = True
                        if proc.poll() is None:
                            proc.send_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous_term)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = usage_delta(before, after)
    cpu, source = user + system, "rusage"
    if group is not None:
        try:
            cpu, source = group.cpu_seconds(), "cgroup"
        except (OSError, ValueError, KeyError):
            pass
        group.remove()
    return ChildUsage(wall_seconds=wall, cpu_seconds=cpu, user_seconds=user, sys_seconds=system,
                      max_rss_kib=after.ru_maxrss, tree_pss_peak_kib=sampler.peak_kib,
                      returncode=proc.returncode, interrupted=interrupted or proc.returncode == 130,
                      cpu_source=source, rusage_core_seconds=round(user + system, 3))


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _child_setup(group: CpuCgroup | None) -> None:
    """Between fork and exec: join the step's cgroup, and take Ctrl-C again. A pass started in the
    background (`nohup ... &`) ignores SIGINT, and so would its eval, inheriting that: a stop
    forwarded as Ctrl-C never reached it, and the pass waited on an eval that ran on."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if group is not None:
        group.join()


@dataclass
class DiskUse:
    """Bytes on disk per named folder (each inode once within it) and for all of them together."""
    folders: dict[str, int] = field(default_factory=dict)
    total: int = 0


def disk_use(named: Iterable[tuple[str, Path, Sequence[Path]]]) -> DiskUse:
    """(name, folder, subfolders left out) -> bytes on disk; the total counts each inode once.

    The order matters for the total only in that a hard-linked file counts in each folder that
    holds a link to it, and once in the total."""
    seen_all: set[tuple[int, int]] = set()
    result = DiskUse()
    for name, folder, skip in named:
        seen: set[tuple[int, int]] = set()
        size = 0
        for st in _walk(folder, {p.resolve() for p in skip}):
            key = (st.st_dev, st.st_ino)
            if key not in seen:
                seen.add(key)
                size += st.st_blocks * 512
            if key not in seen_all:
                seen_all.add(key)
                result.total += st.st_blocks * 512
        result.folders[name] = size
    return result


def _walk(folder: Path, skip: set[Path]) -> Iterable[os.stat_result]:
    if not folder.exists():
        return
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.is_dir(follow_symlinks=False):
                if Path(entry.path).resolve() in skip:
                    continue
                stack.append(Path(entry.path))
            yield st


def source_commit(root: Path) -> dict:
    """The checkout's commit and whether its tracked files are as committed."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              check=False).stdout.strip()

    changed = [line for line in git("status", "--porcelain", "--untracked-files=no").splitlines() if line]
    return {"commit": git("rev-parse", "HEAD"), "clean": not changed, "changed_files": len(changed),
            "describe": git("log", "-1", "--format=%h %s")}
