"""Tests that fail only for want of the internet are told apart from real failures, from the
reports of real pytest and unittest runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from issuebench.models import TestStatus
from issuebench.parsers import get_parser
from issuebench.setup.loop import _lacking_system
from issuebench.setup.offline_tests import (
    _on_this_machine,
    _server_programs,
    debian_package,
    locale_failures,
    offline_failures,
    program_failures,
)
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


def _absent_server_program() -> str:
    """A program of the table this machine does not have (mongod has no Debian package at all)."""
    absent = [p for p in _server_programs() if not _on_this_machine(p)]
    assert absent, "every server program of the table is installed here"
    return "mongod" if "mongod" in absent else absent[0]


SERVER_TESTS = '''
import subprocess

import pytest
import unittest

def test_starts_the_server():
    subprocess.Popen(["{program}", "--port", "6360"])

def test_starts_it_through_a_shell():
    subprocess.run("{program} --version", shell=True, check=True)

def test_reads_a_data_file_of_its_own():
    open("fixtures/data.txt").read()

def test_wrong():
    assert 1 == 2

def test_ok():
    pass

class Cases(unittest.TestCase):
    def test_starts_the_server(self):
        subprocess.Popen(["{program}"])

    def test_ok(self):
        pass
'''


def test_tests_that_start_an_absent_server_program_are_left_out_with_its_package(tmp_path: Path) -> None:
    program = _absent_server_program()
    (tmp_path / "test_servers.py").write_text(SERVER_TESTS.replace("{program}", program))
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-v", "-p", "no:cacheprovider", "test_servers.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"})
    log = done.stdout + done.stderr
    run = Run("test", log=log, statuses=dict(get_parser("pytest")(log)))
    assert run.lacking_program == {
        "test_servers.py::Cases::test_starts_the_server": program,
        "test_servers.py::test_starts_it_through_a_shell": program,
        "test_servers.py::test_starts_the_server": program}
    # a file of the project's own that is missing, and a plain failure, still count against it
    assert run.passed == 2 and len(run.counted) == 7 and run.ratio() == 2 / 4
    assert offline_failures(log, run.failing) == []
    said = _lacking_system(run)   # setup's reason and the recipe's note
    assert said.startswith(f"3 tests fail only because they start {program}, which this machine lacks")
    if debian_package(program):
        assert f"apt-get install -y --no-install-recommends {debian_package(program)}" in said
    else:
        assert f"{program}: no Debian package, install it by other means" in said and "apt-get" not in said

    done = subprocess.run([sys.executable, "-m", "unittest", "-v", "test_servers"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    log = done.stdout + done.stderr
    failing = [t for t, s in get_parser("unittest")(log).items() if s in (TestStatus.FAILED, TestStatus.ERROR)]
    assert program_failures(log, failing) == {"test_servers.Cases.test_starts_the_server": program}
    assert debian_package("redis-server") == "redis-server" and debian_package("redis-cli") == "redis-tools"


def test_a_server_program_this_machine_has_is_an_ordinary_failure(tmp_path: Path, monkeypatch) -> None:
    program = _absent_server_program()
    log = ("=================================== FAILURES ===================================\n"
           "____________________________ test_starts_the_server ____________________________\n"
           f"E   FileNotFoundError: [Errno 2] No such file or directory: '{program}'\n"
           "=========================== 1 failed in 0.1 seconds ============================\n")
    assert program_failures(log, ["t.py::test_starts_the_server"]) == {"t.py::test_starts_the_server": program}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / program).write_text("#!/bin/sh\n")
    (bin_dir / program).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert program_failures(log, ["t.py::test_starts_the_server"]) == {}


def test_the_advice_names_only_packages_this_machines_debian_release_has(monkeypatch) -> None:
    # valkey-server is packaged from Debian 13 on: an apt command naming it on Debian 12 would
    # install nothing at all, memcached included.
    from issuebench.setup import loop

    monkeypatch.setattr(loop, "unknown_packages", lambda packages: [p for p in packages if p == "valkey-server"])
    said = loop._install_advice(["memcached", "mongod", "valkey-server"])
    assert said == ("install the Debian package(s) memcached: apt-get install -y --no-install-recommends memcached; "
                    "valkey-server: not a package of this machine's Debian release; "
                    "mongod: no Debian package, install it by other means")


def test_apt_is_asked_which_packages_it_knows() -> None:
    import shutil

    from issuebench.envs import unknown_packages

    if shutil.which("apt-cache") is None:
        pytest.skip("no apt-cache on this machine")
    assert unknown_packages(["bash", "no-such-package-of-any-release"]) == ["no-such-package-of-any-release"]


LOCALE_TESTS = '''
import locale
import unittest

import pytest

# A locale no machine generates: setlocale refuses it wherever the tests run.
NOWHERE = "xx_YY.UTF-8"


@pytest.fixture
def german():
    old = locale.setlocale(locale.LC_ALL)
    locale.setlocale(locale.LC_ALL, NOWHERE)
    yield
    locale.setlocale(locale.LC_ALL, old)


def test_sorts_in_a_fixtures_locale(german):
    pass

def test_sets_it_itself():
    locale.setlocale(locale.LC_NUMERIC, NOWHERE)

def test_wrong():
    assert 1 == 2

def test_ok():
    pass

class Cases(unittest.TestCase):
    def test_sets_it(self):
        locale.setlocale(locale.LC_ALL, NOWHERE)

    def test_ok(self):
        pass
'''


def test_tests_that_set_a_locale_the_machine_lacks_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "test_locales.py").write_text(LOCALE_TESTS)
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-v", "-p", "no:cacheprovider", "test_locales.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"})
    log = done.stdout + done.stderr
    run = Run("test", log=log, statuses=dict(get_parser("pytest")(log)))
    assert sorted(run.lacking_locale) == ["test_locales.py::Cases::test_sets_it", "test_locales.py::test_sets_it_itself",
                                          "test_locales.py::test_sorts_in_a_fixtures_locale"]
    # the plain failure still counts against the environment
    assert run.passed == 2 and run.ratio() == 2 / 3
    said = _lacking_system(run)
    assert said.startswith("3 tests fail only because the locale they set is not on this machine")
    assert "locale-gen" in said

    done = subprocess.run([sys.executable, "-m", "unittest", "-v", "test_locales.Cases"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    log = done.stdout + done.stderr
    failing = [t for t, s in get_parser("unittest")(log).items() if s in (TestStatus.FAILED, TestStatus.ERROR)]
    assert locale_failures(log, failing) == ["test_locales.Cases.test_sets_it"]


DOCKER_FIXTURE = '''
import subprocess, sys
import pytest

@pytest.fixture(scope="session")
def emulator():
    # A conftest that starts its server in a container: the Docker client is on the machine, its
    # daemon is not (and no sandbox reaches one).
    subprocess.check_output([sys.executable, "docker_client.py", "ps", "-a", "-q"])
    yield "http://localhost:4443"

def test_on_the_emulator(emulator):
    pass

def test_again_on_the_emulator(emulator):
    pass

def test_wrong():
    assert 1 == 2
'''


def _pytest_run(tmp_path: Path, name: str, source: str) -> tuple[str, Run]:
    """(log, run) of pytest -rA over one test file written into tmp_path."""
    (tmp_path / name).write_text(source)
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", name],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    log = done.stdout + done.stderr
    return log, Run("test", log=log, statuses=dict(get_parser("pytest")(log)))


def test_a_test_whose_fixture_needs_a_docker_daemon_fails_in_every_environment(tmp_path: Path) -> None:
    """universal_pathlib's gcs, azure and sftp fixtures run `docker run ...`; here the client exists
    and no daemon does, so they fail whatever the environment (27 of 190 of its sample)."""
    # The client's words are not in the fixture's source, which every error report shows.
    (tmp_path / "docker_client.py").write_text(
        "import sys\nsys.stderr.write('Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
        "Is the docker daemon running?\\n')\nsys.exit(1)\n")
    log, run = _pytest_run(tmp_path, "test_cloud.py", DOCKER_FIXTURE)
    assert sorted(run.failing) == ["test_cloud.py::test_again_on_the_emulator", "test_cloud.py::test_on_the_emulator",
                                   "test_cloud.py::test_wrong"]
    # The fixture's words are printed under the first test only; the second shows the same error.
    assert log.count("Cannot connect to the Docker daemon") == 1
    assert sorted(offline_failures(log, run.failing)) == ["test_cloud.py::test_again_on_the_emulator",
                                                          "test_cloud.py::test_on_the_emulator"]


# The drivers' words, as a real run of flask-admin's suite printed them with no server running.
DATABASE_TESTS = '''
class OperationalError(Exception):
    pass

class ServerSelectionTimeoutError(Exception):
    pass

def test_postgres():
    raise OperationalError('connection to server at "localhost" (127.0.0.1), port 5432 failed: Connection refused'
                           '\\n\\tIs the server running on that host and accepting TCP/IP connections?')

def test_mongo():
    raise ServerSelectionTimeoutError("localhost:27017: [Errno 111] Connection refused (configured timeouts: "
                                      "socketTimeoutMS: 20000.0ms, connectTimeoutMS: 20000.0ms), Timeout: 30s")

def test_wrong():
    assert 3 == 2
'''


def test_a_test_that_needs_a_database_server_fails_in_every_environment(tmp_path: Path) -> None:
    """flask-admin's PostgreSQL and MongoDB tests (25 of its 419) kept its setup at 94%."""
    log, run = _pytest_run(tmp_path, "test_db.py", DATABASE_TESTS)
    assert len(run.failing) == 3
    assert sorted(offline_failures(log, run.failing)) == ["test_db.py::test_mongo", "test_db.py::test_postgres"]


def test_a_suite_that_words_the_missing_server_itself_fails_in_every_environment(tmp_path: Path) -> None:
    """requests-cache's fixtures catch each backend's error (Redis, MongoDB, DynamoDB) and fail
    with `Could not connect to backend`: its setup was refused at 53% with 124 such tests."""
    log, run = _pytest_run(tmp_path, "test_backends.py", (
        "import pytest\n\n\n@pytest.fixture\ndef redis_cache():\n    try:\n"
        "        raise TimeoutError('Function timed out after 1.0 seconds')\n    except Exception:\n"
        "        pytest.fail('Could not connect to backend')\n\n\n"
        "def test_get(redis_cache):\n    pass\n\n\ndef test_set(redis_cache):\n    pass\n\n\n"
        "def test_wrong():\n    assert 3 == 2\n"))
    assert len(run.failing) == 3
    assert sorted(offline_failures(log, run.failing)) == ["test_backends.py::test_get", "test_backends.py::test_set"]


DOCKER_SDK_FIXTURE = '''
import docker
import pytest

@pytest.fixture(scope="session")
def client():
    # auditwheel's manylinux tests: docker.from_env() before each container they start.
    return docker.from_env()

def test_in_a_container(client):
    pass

def test_in_another(client):
    pass

def test_wrong():
    assert 1 == 2
'''


def test_a_test_whose_fixture_asks_the_docker_sdk_for_a_daemon_fails_in_every_environment(
        tmp_path: Path, monkeypatch) -> None:
    """The Docker SDK's own words when no daemon answers (auditwheel: 94 of 175 tests of its
    sample, every one an error in its fixture), from the real client library."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    log, run = _pytest_run(tmp_path, "test_images.py", DOCKER_SDK_FIXTURE)
    assert "Error while fetching server API version" in log
    assert sorted(offline_failures(log, run.failing)) == ["test_images.py::test_in_a_container",
                                                          "test_images.py::test_in_another"]


DATA_AT_IMPORT = '''
import socket

# cf-xarray's test modules open xarray's tutorial datasets when imported; pooch fetches them.
raise socket.gaierror(-3, "Temporary failure in name resolution")
'''


def test_a_module_that_fetches_at_import_is_named_as_needing_the_network(tmp_path: Path) -> None:
    """cf-xarray: 3 test modules download data when imported. Such a module is named as needing
    the internet (its report is headed `ERROR collecting <file>`), and still counts as all its
    tests failing: accepted without them, the suite gave six candidates and no task."""
    (tmp_path / "test_data.py").write_text(DATA_AT_IMPORT)
    (tmp_path / "test_plain.py").write_text("".join(f"def test_{i}():\n    pass\n\n" for i in range(4)))
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                           "--continue-on-collection-errors"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    log = done.stdout + done.stderr
    run = Run("test", log=log, statuses=dict(get_parser("pytest")(log)))
    assert run.import_failed == ["test_data.py"]
    assert run.offline == ["test_data.py"]
    assert run.ratio() < 0.95
