"""The bubblewrap sandbox: a read-only system, a private /tmp, no $HOME, no network, limits.

What a sandboxed command sees:
  /              the host system, read-only (bwrap remounts every submount read-only too)
  /dev, /proc    a minimal /dev and a /proc of its own pid namespace (no host processes)
  /tmp           an empty tmpfs; the workspace is bound read-write at TESTBED_PATH inside it
                 (bwrap cannot create a new top-level mount point under a read-only /)
  /var/tmp       an empty tmpfs, the run's TMPDIR (SCRATCH_DIR: outside the workspace's /tmp)
  TESTBED/.git   read-only, so code under test cannot plant hooks or config that the harness's
                 later git commands (outside the sandbox) would run
  $HOME, /root,  empty tmpfs; the issuebench cache root too, so a run cannot read other runs'
  cache root     workspaces or results. Bind entries (an env's venv, its interpreter) come back
                 on top of these, read-only unless marked writable.
  the package    issuebench's own folder, read-only at its own path: the helpers the harness runs
                 in the sandbox by path (envs/declared_requirements_script.py) open wherever the
                 package is installed, a clone under /tmp or a venv under $HOME included
  environment    cleared; only BASE_ENV plus the caller's `env`
  namespaces     user, pid, ipc, uts, net unshared (net shared only when network=True, which
                 only environment builds ask for); --die-with-parent, --new-session. Not cgroup:
                 see NAMESPACES
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from issuebench import config
from issuebench.config import TESTBED_PATH
from issuebench.sandbox.supervise import supervise
from issuebench.sandbox.types import SANDBOX_FAILED, Bind, Limits, RunResult

SANDBOX_HOME = "/tmp/home"
# The temporary folder a run's tools use (tempfile, pytest's tmp_path): an empty tmpfs of its own
# outside /tmp, so that, as under the reference's /testbed and /tmp, the workspace and the
# temporary files share no top-level folder. docutils' relative_path gives a path relative to the
# working folder when the two share their first folder: sphinx-11510's included file then became
# `../pytest-of-root/...` instead of its absolute path, and its document name was wrong.
SCRATCH_DIR = "/var/tmp" if Path("/var/tmp").is_dir() else "/tmp"
# `--unshare-all` without its cgroup namespace. Under a cgroup v1 host, a JVM started in a cgroup
# namespace fails in its container detection (OpenJDK 17: a NullPointerException reading its
# cgroup paths, then no platform MBean server): pyspark's tests (pandera) could not start a Spark
# context. The cgroup files stay hidden (a tmpfs over /sys/fs/cgroup) and the run stays in its own
# cgroup; only /proc/self/cgroup shows that cgroup's path, which grants nothing.
NAMESPACES = ["--unshare-user-try", "--unshare-ipc", "--unshare-pid", "--unshare-uts"]
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The whole environment a command starts from. PYTHONDONTWRITEBYTECODE is deliberately not set:
# the reference harness does not set it, and some projects' own tests check .pyc writing.
BASE_ENV = {
    "PATH": DEFAULT_PATH,
    "HOME": SANDBOX_HOME,
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TMPDIR": SCRATCH_DIR,
}
# Directories never worth hiding behind a tmpfs (hiding them would break the system view).
_NEVER_HIDE = {"/", "/usr", "/etc", "/bin", "/lib", "/lib64", "/sbin", "/opt", "/var", "/tmp", "/proc", "/dev"}
# The installed issuebench package (this file's grandparent folder). Only it comes back, not the
# folders around it: a clone's other files and the rest of $HOME stay hidden.
PACKAGE_DIR = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def bwrap_supports(option: str) -> bool:
    try:
        text = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return option in text


def hidden_dirs() -> list[str]:
    """Directories covered by an empty tmpfs: $HOME, /root, the issuebench cache root and the
    folder of workspaces (other runs' checkouts) when it lies elsewhere."""
    candidates = [Path.home(), Path("/root"), config.home(), config.workspaces_dir()]
    out: set[str] = set()
    for path in candidates:
        try:
            resolved = path.resolve()
        except OSError:
            continue
        text = str(resolved)
        if text in _NEVER_HIDE or text.startswith(("/tmp/", "/dev/")) or not resolved.is_dir():
            continue  # anything under /tmp or /dev is already hidden: the sandbox has its own
        out.add(text)
    return sorted(out, key=lambda p: (p.count("/"), p))


def package_bind() -> Bind:
    """The package's folder, read-only: every package file the harness runs in the sandbox is
    opened there at the path it has on the host, so callers pass host paths as they are."""
    return Bind(PACKAGE_DIR)


def build_argv(argv: Sequence[str], *, workspace: Path, binds: Sequence[Bind], env: Mapping[str, str],
               limits: Limits, network: bool, cwd: str, protect_git: bool = True) -> list[str]:
    args = ["bwrap", *NAMESPACES]
    if not network:
        args.append("--unshare-net")
    args += ["--die-with-parent", "--new-session",
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if bwrap_supports("--size"):
        # tmpfs pages are charged to the run's memory cgroup; the size caps them without one too.
        args += ["--size", str((limits.memory_mb or 4096) * 1024 * 1024)]
    args += ["--tmpfs", "/tmp"]
    if SCRATCH_DIR != "/tmp":
        if bwrap_supports("--size"):
            args += ["--size", str((limits.memory_mb or 4096) * 1024 * 1024)]
        args += ["--tmpfs", SCRATCH_DIR]
    if Path("/sys/fs/cgroup").is_dir():
        # The host's cgroup files describe the host's scheduling, not the run's: pylint reads a
        # cgroup v1 cpu.shares of 1024 as "1 CPU" and skips its multiprocessing tests, which then
        # go missing from the log. Under the reference's containers they are not there either.
        args += ["--tmpfs", "/sys/fs/cgroup"]
    for path in hidden_dirs():
        args += ["--tmpfs", path]
    # Binds into the workspace (an environment's node_modules) go over it, so after it.
    inside = [b for b in binds if (b.dst or str(b.src)).startswith(TESTBED_PATH + "/")]
    outside = [b for b in [*binds, package_bind()] if b not in inside]
    for bind in sorted(outside, key=lambda b: (b.dst or str(b.src)).count("/")):
        dst = bind.dst or str(bind.src)
        args += ["--bind" if bind.writable else "--ro-bind", str(bind.src), dst]
    args += ["--bind", str(workspace), TESTBED_PATH]
    git_dir = workspace / ".git"
    if protect_git and git_dir.exists():
        args += ["--ro-bind", str(git_dir), f"{TESTBED_PATH}/.git"]
    for bind in sorted(inside, key=lambda b: str(b.dst).count("/")):
        args += ["--bind" if bind.writable else "--ro-bind", str(bind.src), str(bind.dst)]
    args += ["--dir", SANDBOX_HOME, "--chdir", cwd, "--clearenv"]
    for key, value in {**BASE_ENV, **env}.items():
        args += ["--setenv", key, value]
    args += ["--json-status-fd", "{STATUS_FD}", "--", *argv]
    return args


class BwrapSandbox:
    name = "bwrap"

    def run(self, argv: list[str], *, workspace: Path, binds: Sequence[Bind] = (),
            env: Mapping[str, str] | None = None, limits: Limits | None = None,
            network: bool = False, cwd: str = TESTBED_PATH,
            output_path: Path | None = None, protect_git: bool = True) -> RunResult:
        limits = limits or Limits()
        workspace = Path(workspace).resolve()
        missing = [str(b.src) for b in binds if not Path(b.src).exists()]
        if not workspace.is_dir():
            missing.insert(0, str(workspace))
        if missing:
            reason = (f"sandbox bind source {missing[0]} does not exist; build the environment "
                      "again (issuebench envs) or check the workspace")
            return RunResult(None, "", SANDBOX_FAILED, reason, 0.0, sandbox=self.name)
        wrapped = build_argv(argv, workspace=workspace, binds=binds, env=dict(env or {}), limits=limits,
                             network=network, cwd=cwd, protect_git=protect_git)
        # The outer process only needs to find bwrap; the command's environment is set inside.
        outer_env = {"PATH": os.environ.get("PATH", DEFAULT_PATH)}
        return supervise(wrapped, cwd=workspace, env=outer_env, limits=limits, output_path=output_path,
                         sandbox_name=self.name, status_fd=True)


@functools.lru_cache(maxsize=1)
def probe() -> str | None:
    """None when bwrap can build a sandbox here, else the reason it cannot."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        proc = subprocess.run(["bwrap", *NAMESPACES, "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/",
                               "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "true"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not run: {exc}"
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bwrap cannot create namespaces here ({detail})"
    return None
