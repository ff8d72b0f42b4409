"""What the sandbox's network answers a test, and that setup reads it as the sandbox's doing, not the
environment's: a socket that joins a multicast group fails with ENODEV (only a loopback device,
no multicast route), under whatever error the project chains it to (python-can's UDP bus)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from issuebench.models import TestStatus
from issuebench.parsers import get_parser
from issuebench.sandbox import Bind, get_sandbox
from issuebench.setup.offline_tests import offline_failures

PY_PREFIX = Path(sys.base_prefix).resolve()

TESTS = '''
import socket
import struct
import unittest


class BusError(Exception):
    pass


def join(group):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        request = struct.pack("4sl", socket.inet_aton(group), socket.INADDR_ANY)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, request)
    except OSError as error:
        raise BusError("could not create or configure socket") from error
    finally:
        sock.close()


class Bus(unittest.TestCase):
    def test_multicast(self):
        join("239.74.163.2")

    def test_wrong(self):
        self.assertEqual(1, 2)

    def test_ok(self):
        pass
'''


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "test_bus.py").write_text(TESTS)
    return ws


def test_a_multicast_socket_fails_in_the_sandbox_and_is_read_as_offline(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    python = str(PY_PREFIX / "bin" / "python3")
    result = get_sandbox().run([python, "-m", "unittest", "-v", "test_bus"], workspace=ws,
                               binds=[Bind(PY_PREFIX)], network=False)
    log = result.output
    assert "[Errno 19] No such device" in log, log[-2000:]
    statuses = dict(get_parser("unittest")(log))
    failing = sorted(t for t, s in statuses.items() if s in (TestStatus.FAILED, TestStatus.ERROR))
    assert failing == ["test_bus.Bus.test_multicast", "test_bus.Bus.test_wrong"]
    assert offline_failures(log, failing) == ["test_bus.Bus.test_multicast"]



def test_a_coloured_pytest_report_is_read_as_a_plain_one(tmp_path: Path) -> None:
    """python-can's addopts say `--color=yes`: its report headers came wrapped in colour codes, no
    report was found, and the 28 multicast tests counted against the environment."""
    ws = _workspace(tmp_path)
    venv = Path(sys.prefix).resolve()
    result = get_sandbox().run([str(venv / "bin" / "python"), "-m", "pytest", "-rA", "--color=yes",
                                "-p", "no:cacheprovider", "test_bus.py"], workspace=ws,
                               binds=[Bind(PY_PREFIX), Bind(venv)], network=False)
    log = result.output
    assert "\x1b[" in log and "_ Bus.test_multicast _" in log, log[-2000:]
    failing = sorted(t for t, s in dict(get_parser("pytest")(log)).items() if s in (TestStatus.FAILED, TestStatus.ERROR))
    assert failing == ["test_bus.py::Bus::test_multicast", "test_bus.py::Bus::test_wrong"]
    assert offline_failures(log, failing) == ["test_bus.py::Bus::test_multicast"]
