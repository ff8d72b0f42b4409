"""Tests that fail only for want of the internet are told apart from real failures, from the
reports of real pytest and unittest runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from issuebench.models import TestStatus
from issuebench.parsers import get_parser
from issuebench.setup.offline_tests import offline_failures
from issuebench.setup.runner import Run

# `.invalid` never resolves (RFC 6761): the same gaierror the sandbox gives for any host.
TESTS = '''
import socket
import unittest

def fetch():
    socket.getaddrinfo("httpbin.invalid", 80)

def test_fetches():
    fetch()

def test_plain_failure():
    assert 1 == 2

def test_ok():
    pass

class TestSuite:
    def test_fetches(self):
        fetch()

    def test_whose_name_is_so_long_that_its_report_header_has_one_underscore_each_side_only(self):
        fetch()

    def test_wrong(self):
        assert "a" == "b"

class Cases(unittest.TestCase):
    def test_fetches(self):
        fetch()

    def test_wrong(self):
        self.assertEqual(1, 2)

    def test_ok(self):
        pass
'''


def _run(tmp_path: Path, *args: str) -> str:
    (tmp_path / "test_net.py").write_text(TESTS)
    done = subprocess.run([sys.executable, "-m", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "80"})   # a terminal's width
    return done.stdout + done.stderr


def test_pytest_reports_name_the_tests_that_reached_for_the_network(tmp_path: Path) -> None:
    log = _run(tmp_path, "pytest", "-rA", "-v", "-p", "no:cacheprovider", "test_net.py")
    run = Run("test", log=log, statuses=dict(get_parser("pytest")(log)))
    long_name = "test_whose_name_is_so_long_that_its_report_header_has_one_underscore_each_side_only"
    assert offline_failures(log, run.failing) == [
        "test_net.py::Cases::test_fetches", "test_net.py::TestSuite::test_fetches",
        f"test_net.py::TestSuite::{long_name}", "test_net.py::test_fetches"]
    assert f"_ TestSuite.{long_name} _\n" in log
    assert run.passed == 2 and len(run.counted) == 9
    # 2 of the 5 tests that do not need the internet pass
    assert run.ratio() == 2 / 5


def test_unittest_reports_name_the_tests_that_reached_for_the_network(tmp_path: Path) -> None:
    log = _run(tmp_path, "unittest", "-v", "test_net")
    statuses = dict(get_parser("unittest")(log))
    failing = sorted(t for t, s in statuses.items() if s in (TestStatus.FAILED, TestStatus.ERROR))
    assert len(failing) == 2
    assert offline_failures(log, failing) == ["test_net.Cases.test_fetches"]
    # Pythons before 3.11 head a report `test_x (module.Class)`
    older = log.replace("(test_net.Cases.test_fetches)", "(test_net.Cases)")
    assert offline_failures(older, failing) == ["test_net.Cases.test_fetches"]


def test_a_failure_without_its_report_is_never_taken_for_a_network_one(tmp_path: Path) -> None:
    log = _run(tmp_path, "pytest", "-rA", "-v", "--tb=no", "-p", "no:cacheprovider", "test_net.py")
    run = Run("test", log=log, statuses=dict(get_parser("pytest")(log)))
    assert run.failing and offline_failures(log, run.failing) == []
    assert run.ratio() == 2 / 9


def test_pytest_2_ids_with_file_and_line_are_matched_to_their_reports() -> None:
    log = ("test_requests.py:106: RequestsTestCase.test_get FAILED\n"
           "test_requests.py:115: RequestsTestCase.test_parse PASSED\n"
           "=================================== FAILURES ===================================\n"
           "__________________________ RequestsTestCase.test_get ___________________________\n"
           "E   ConnectionError: HTTPConnectionPool(host='httpbin.org', port=80): Max retries exceeded "
           "(Caused by <class 'socket.gaierror'>: [Errno -3] Temporary failure in name resolution)\n"
           "===================== 1 failed, 1 passed in 0.5 seconds ======================\n")
    assert offline_failures(log, ["test_requests.py:106: RequestsTestCase.test_get"]) == [
        "test_requests.py:106: RequestsTestCase.test_get"]
