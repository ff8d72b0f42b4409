"""The real bubblewrap sandbox: isolation and every limit, each proven by a command that tries."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from issuebench.config import TESTBED_PATH
from issuebench.errors import MissingSystemPiece
from issuebench.sandbox import (
    FILE_LIMIT,
    INSTALL_HINT,
    MEMORY_LIMIT,
    OK,
    OUTPUT_LIMIT,
    PROCESS_LIMIT,
    SANDBOX_FAILED,
    TIMEOUT,
    Bind,
    Limits,
    UnsandboxedRunner,
    get_sandbox,
)
from issuebench.sandbox import bwrap as bwrap_mod
from issuebench.sandbox.cgroups import PREFIX, parent_dir

PY_PREFIX = Path(sys.base_prefix).resolve()
PY = str(PY_PREFIX / "bin" / "python3")
PY_BIND = [Bind(PY_PREFIX)]  # the interpreter may live under $HOME, which the sandbox hides
FAST = Limits(timeout=20, memory_mb=512, max_procs=64, max_output_bytes=1_000_000, max_file_mb=8)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "ib-home"))


@pytest.fixture
def sandbox():
    return get_sandbox()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "hello.txt").write_text("hi\n")
    return ws


def py(sandbox, workspace: Path, code: str, limits: Limits = FAST, **kw):
    return sandbox.run([PY, "-c", code], workspace=workspace, binds=PY_BIND, limits=limits, **kw)


def leaked_cgroups() -> list[str]:
    out = []
    for controller in ("pids", "memory"):
        parent = parent_dir(controller)
        if parent is not None:
            out += [p.name for p in parent.iterdir() if p.name.startswith(f"{PREFIX}{os.getpid()}-")]
    return out


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found


def test_runs_in_testbed_with_known_environment(sandbox, workspace: Path, monkeypatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "planted-secret")
    result = sandbox.run(["sh", "-c", "pwd; cat hello.txt; env"], workspace=workspace,
                         env={"EXTRA": "given"}, limits=FAST)
    assert result.status == OK and result.returncode == 0, result.reason
    lines = result.output.splitlines()
    assert lines[:2] == [TESTBED_PATH, "hi"]
    assert "planted-secret" not in result.output
    assert "EXTRA=given" in lines
    assert f"HOME={bwrap_mod.SANDBOX_HOME}" in lines
    names = {line.split("=", 1)[0] for line in lines[2:] if "=" in line}
    assert names <= {*bwrap_mod.BASE_ENV, "EXTRA", "PWD", "SHLVL", "_", "OLDPWD"}
    assert "cgroup" in result.enforcement or "rlimit" in result.enforcement
    assert leaked_cgroups() == []


def test_no_route_to_the_outside(sandbox, workspace: Path) -> None:
    # A UDP connect() only looks up a route, so this proves "no network" without sending traffic.
    code = (
        "import os, socket\n"
        "print('ifaces', sorted(os.listdir('/sys/class/net')))\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "try:\n    s.connect(('192.0.2.1', 9)); print('ROUTE')\n"
        "except OSError as e:\n    print('noroute', e.errno)\n"
        "try:\n    socket.getaddrinfo('example.com', 443); print('DNS')\n"
        "except OSError:\n    print('nodns')\n"
    )
    result = py(sandbox, workspace, code)
    assert result.status == OK, result.output
    assert "ROUTE" not in result.output and "noroute" in result.output
    assert "DNS" not in result.output and "nodns" in result.output


def test_cannot_reach_a_server_on_host_loopback(sandbox, workspace: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[bool] = []

    def accept() -> None:
        server.settimeout(5)
        try:
            server.accept()
            accepted.append(True)
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    code = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "    print('CONNECTED')\nexcept OSError as e:\n    print('refused', e)\n")
    result = py(sandbox, workspace, code)
    server.close()
    thread.join()
    assert "refused" in result.output and "CONNECTED" not in result.output
    assert accepted == []


def test_secrets_in_home_are_hidden(sandbox, workspace: Path, home_outside_tmp: Path, monkeypatch) -> None:
    fake_home = home_outside_tmp
    (fake_home / ".ssh").mkdir(parents=True)
    secret = fake_home / ".ssh" / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(fake_home))
    command = ["sh", "-c", f"cat {secret}; ls -A ~; echo done"]
    result = sandbox.run(command, workspace=workspace, limits=FAST)
    assert "PRIVATE KEY" not in result.output
    assert result.output.strip().endswith("done")
    # The defence under test is the hiding of $HOME: without it, this very secret is read.
    monkeypatch.setattr(bwrap_mod, "hidden_dirs", lambda: [])
    assert "PRIVATE KEY" in sandbox.run(command, workspace=workspace, limits=FAST).output


@pytest.mark.parametrize("where", ["default", "own folder"])
def test_other_runs_workspaces_are_out_of_sight(sandbox, workspace: Path, home_outside_tmp: Path, monkeypatch,
                                                where) -> None:
    from issuebench import config

    if where == "own folder":   # ISSUEBENCH_WORKSPACES outside the home and /tmp
        monkeypatch.setenv("ISSUEBENCH_WORKSPACES", str(home_outside_tmp / "workspaces"))
    other = config.workspaces_dir() / "ws-1-other-run"
    other.mkdir(parents=True)
    (other / "fix.py").write_text("ANOTHER RUN'S CODE\n")
    command = ["sh", "-c", f"cat {other}/fix.py; echo done"]
    result = sandbox.run(command, workspace=workspace, limits=FAST)
    assert "ANOTHER RUN'S CODE" not in result.output and result.output.strip().endswith("done")
    if where == "own folder":   # the defence under test is the hiding: without it the file is read
        monkeypatch.setattr(bwrap_mod, "hidden_dirs", lambda: [])
        assert "ANOTHER RUN'S CODE" in sandbox.run(command, workspace=workspace, limits=FAST).output
    shutil.rmtree(other)


def test_the_real_home_is_an_empty_tmpfs(sandbox, workspace: Path) -> None:
    real_home = Path(os.path.expanduser("~")).resolve()
    if str(real_home).startswith("/tmp") or str(real_home) == "/":
        pytest.skip("home lies under /tmp, which is private anyway")
    assert str(real_home) in bwrap_mod.hidden_dirs()
    result = sandbox.run(["ls", "-A", str(real_home)], workspace=workspace, limits=FAST)
    visible = [name for name in result.output.split() if name]
    # Only mount points of binds placed under it may show: none are given here, and the package's
    # own folder (bound back for its helpers) shows as the empty folder leading to it.
    package = bwrap_mod.PACKAGE_DIR
    expected = [package.relative_to(real_home).parts[0]] if package.is_relative_to(real_home) else []
    assert visible == expected, visible


def test_cannot_write_outside_the_workspace(sandbox, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    script = (
        f"touch /usr/pwned 2>&1; touch {outside} 2>&1; echo new > {TESTBED_PATH}/made.txt;"
        f" touch {TESTBED_PATH}/.git/hooks/post-checkout 2>&1; echo end"
    )
    result = sandbox.run(["sh", "-c", script], workspace=workspace, limits=FAST)
    assert "Read-only file system" in result.output
    assert not Path("/usr/pwned").exists()
    assert not outside.exists(), "host /tmp must not be reachable"
    assert (workspace / "made.txt").read_text() == "new\n"
    assert not (workspace / ".git/hooks/post-checkout").exists(), ".git must be read-only"


def test_fork_bomb_hits_process_limit(sandbox, workspace: Path) -> None:
    result = sandbox.run(["bash", "-c", "bomb() { bomb | bomb & }; bomb; sleep 60"], workspace=workspace,
                         limits=Limits(timeout=30, max_procs=40))
    assert result.status == PROCESS_LIMIT, (result.status, result.reason)
    assert "40" in result.reason and "max_procs" in result.reason
    assert result.duration < 25
    assert leaked_cgroups() == []


def test_allocation_hits_memory_limit(sandbox, workspace: Path) -> None:
    code = "x = []\nwhile True:\n    x.append(b'x' * 10_000_000)\n"
    result = py(sandbox, workspace, code, Limits(timeout=30, memory_mb=150))
    assert result.status == MEMORY_LIMIT, (result.status, result.reason, result.output[-500:])
    assert "150 MiB" in result.reason


def test_detached_sleeper_is_gone_after_timeout(sandbox, workspace: Path) -> None:
    marker = f"{time.time() % 1000:.6f}"  # a sleep length no other process uses
    script = f"setsid sleep 1{marker} & nohup sleep 2{marker} >/dev/null 2>&1 & sleep 3{marker}"
    result = sandbox.run(["sh", "-c", script], workspace=workspace, limits=Limits(timeout=1.5))
    assert result.status == TIMEOUT
    assert result.returncode is None
    assert "1.5s" in result.reason
    time.sleep(0.2)
    assert processes_with(marker) == []


def test_printing_forever_hits_output_limit(sandbox, workspace: Path, tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    result = sandbox.run(["yes", "spam"], workspace=workspace, output_path=log,
                         limits=Limits(timeout=30, max_output_bytes=200_000))
    assert result.status == OUTPUT_LIMIT
    assert log.stat().st_size < 200_000 + 1_000
    assert len(result.output) < 200_000 + 1_000
    assert result.output.endswith("the run was stopped]\n")


def test_a_run_printing_past_the_limit_keeps_its_start_and_its_end(sandbox, workspace: Path, tmp_path: Path) -> None:
    # pytest -rA prints every passing test's captured log before the summary the parser reads:
    # the run goes on, its middle is cut, and the summary at its end is kept.
    log = tmp_path / "out.log"
    code = ("import sys\nsys.stdout.write('FIRST LINE\\n')\n"
            "for i in range(6000):\n    sys.stdout.write(f'captured {i:06d} ' + 'x' * 90 + '\\n')\n"
            "sys.stdout.write('short test summary: 3 passed\\n')\n")
    result = py(sandbox, workspace, code, Limits(timeout=30, max_output_bytes=200_000), output_path=log)
    assert result.status == OK, result.reason
    assert result.returncode == 0
    assert result.output.startswith("FIRST LINE\n")
    assert result.output.endswith("short test summary: 3 passed\n")
    assert "bytes of output cut here; its start and its end are kept]" in result.output
    assert "captured 005999 " in result.output and "captured 003000 " not in result.output
    assert log.read_text() == result.output
    assert len(result.output) < 200_000 + 1_000
    assert any("the middle cut" in note for note in result.notes)


def test_temporary_files_share_no_top_level_folder_with_the_workspace(sandbox, workspace: Path) -> None:
    # As under the reference's /testbed and /tmp: docutils' relative_path turns a temporary
    # file's path relative to the working folder when both share their first folder, and
    # sphinx-11510's included document got a name starting with `..`.
    code = ("import os, tempfile\nd = tempfile.mkdtemp()\nopen(os.path.join(d, 'f'), 'w').write('x')\n"
            "print(os.path.commonpath([d, os.getcwd()]), len(os.listdir(tempfile.gettempdir())))")
    result = py(sandbox, workspace, code)
    assert result.status == OK, result.output
    assert result.output.split() == ["/", "1"], result.output


def test_big_file_hits_file_limit(sandbox, workspace: Path) -> None:
    result = py(sandbox, workspace, "open('big.bin', 'wb').write(b'x' * 5 * 2**20)",
                Limits(timeout=30, max_file_mb=2))
    assert result.status == FILE_LIMIT, (result.status, result.output)
    assert (workspace / "big.bin").stat().st_size <= 2 * 2**20


def test_killing_its_parent_does_not_hang_us(sandbox, workspace: Path) -> None:
    script = f"{PY} -c 'import os; os.kill(os.getppid(), 9)'; sleep 100"
    result = sandbox.run(["sh", "-c", script], workspace=workspace, binds=PY_BIND,
                         limits=Limits(timeout=20))
    assert result.status == OK
    assert result.duration < 10


def test_background_child_holding_the_pipe_does_not_hang_us(sandbox, workspace: Path) -> None:
    result = sandbox.run(["sh", "-c", "(sleep 100 &); echo parent-done"], workspace=workspace,
                         limits=Limits(timeout=20))
    assert result.status == OK and "parent-done" in result.output
    assert result.duration < 10


def test_bad_setup_is_sandbox_failed(sandbox, workspace: Path) -> None:
    result = sandbox.run(["true"], workspace=workspace, cwd="/no/such/dir", limits=FAST)
    assert result.status == SANDBOX_FAILED
    assert "bwrap" in result.reason
    missing = sandbox.run(["true"], workspace=workspace, binds=[Bind(Path("/no/such/venv"))])
    assert missing.status == SANDBOX_FAILED and "/no/such/venv" in missing.reason


def test_writable_bind_and_network_flag(sandbox, workspace: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    result = sandbox.run(["sh", "-c", f"touch {venv}/ok; ls /sys/class/net"], workspace=workspace,
                         binds=[Bind(venv, writable=True)], network=True, limits=FAST)
    assert result.status == OK, result.reason
    assert (venv / "ok").exists()
    assert result.output.split() != ["lo"], "network=True shares the host's interfaces"


def test_missing_bwrap_is_one_clear_line(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    bwrap_mod.probe.cache_clear()
    try:
        with pytest.raises(MissingSystemPiece) as info:
            get_sandbox()
    finally:
        bwrap_mod.probe.cache_clear()
    assert INSTALL_HINT in str(info.value)
    assert "\n" not in str(info.value)
    assert get_sandbox(no_sandbox=True).name == "none"


def test_unsandboxed_runner_still_enforces_limits(workspace: Path, monkeypatch, caplog) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "planted-secret")
    runner = UnsandboxedRunner()
    result = runner.run(["sh", "-c", "pwd; env"], workspace=workspace, limits=FAST)
    assert result.status == OK
    assert result.output.splitlines()[0] == str(workspace.resolve())
    assert "planted-secret" not in result.output
    marker = f"{uuid.uuid4().int % 10**6}"
    sleeper = runner.run(["sh", "-c", f"setsid sleep 7{marker} & sleep 8{marker}"], workspace=workspace,
                         limits=Limits(timeout=1))
    assert sleeper.status == TIMEOUT
    spam = runner.run(["yes"], workspace=workspace, limits=Limits(max_output_bytes=50_000))
    assert spam.status == OUTPUT_LIMIT
    time.sleep(0.2)
    if parent_dir("pids") is not None:  # with a pids cgroup even setsid children are found and killed
        assert processes_with(marker) == []
    assert leaked_cgroups() == []


def test_host_cgroup_files_are_not_shown_to_the_run(sandbox, workspace: Path) -> None:
    # pylint counts cpu.shares/1024 from these as the CPUs it has, and skips tests on a "1 CPU" host.
    if not Path("/sys/fs/cgroup").is_dir() or not any(Path("/sys/fs/cgroup").iterdir()):
        pytest.skip("this machine shows no cgroup files")
    result = sandbox.run(["ls", "-A", "/sys/fs/cgroup"], workspace=workspace, limits=FAST)
    assert result.output.split() == []
    assert any(Path("/sys/fs/cgroup").iterdir())   # outside, they are there


POOLS_JAVA = """
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
public class Pools {
    public static void main(String[] args) throws Exception {
        BufferPoolMXBean pool = ManagementFactory.newPlatformMXBeanProxy(
            ManagementFactory.getPlatformMBeanServer(), "java.nio:type=BufferPool,name=direct",
            BufferPoolMXBean.class);
        System.out.println("pool " + pool.getName());
    }
}
"""


def test_a_jvm_reads_its_own_management_beans(sandbox, workspace: Path) -> None:
    # What Spark does when it starts (pyspark's tests): in a cgroup namespace a JVM's container
    # detection failed on a cgroup v1 host and no platform MBean server came up.
    if shutil.which("java") is None:
        pytest.skip("no java on this machine")
    (workspace / "Pools.java").write_text(POOLS_JAVA)
    result = sandbox.run(["java", "-Xmx256m", "Pools.java"], workspace=workspace,
                         limits=Limits(timeout=120, memory_mb=2048, max_procs=512))
    assert result.status == OK and result.returncode == 0, result.output[-2000:]
    assert "pool direct" in result.output.splitlines()
