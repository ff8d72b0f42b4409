"""Releases whose requires-python refuses the interpreter (uv ignores upper bounds, pip does not):
read from a PEP 691 index page served on loopback, and replaced in the dated resolution."""

import json
import re
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from issuebench.envs import python_support
from issuebench.envs.build_log import BuildLog, StepFailed
from issuebench.envs.dated_packages import DatedPackages
from issuebench.envs.requirements import exact_pins

FILES = {  # numba's own bounds of the time: 0.52 stopped before Python 3.9, 0.53 admitted it
    "numba": [("numba-0.51.2-cp38-cp38-manylinux2014_x86_64.whl", ">=3.6,<3.9", "2020-09-02T00:00:00Z"),
              ("numba-0.52.0.tar.gz", ">=3.6,<3.9", "2020-12-01T00:00:00Z"),
              ("numba-0.52.0-cp38-cp38-manylinux2014_x86_64.whl", ">=3.6,<3.9", "2020-12-01T00:00:00Z"),
              ("numba-0.53.0rc1.tar.gz", ">=3.6,<3.10", "2021-02-01T00:00:00Z"),
              ("numba-0.53.0.tar.gz", ">=3.6,<3.10", "2021-03-12T13:40:22Z"),
              ("numba-0.54.0.tar.gz", ">=3.7,<3.10", "2021-08-19T00:00:00Z")],
    "numpy": [("numpy-1.19.4.tar.gz", ">=3.6", "2020-11-02T00:00:00Z")],
}


class _JsonIndex(SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        super().end_headers()


@pytest.fixture
def index(tmp_path, monkeypatch):
    for name, files in FILES.items():
        page = tmp_path / "simple" / name
        page.mkdir(parents=True)
        (page / "index.html").write_text(json.dumps({"files": [
            {"filename": f, "requires-python": rp, "upload-time": t, "url": f"../../files/{f}"}
            for f, rp, t in files]}))
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_JsonIndex, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_port}/simple")
    python_support._releases.cache_clear()
    yield
    python_support._releases.cache_clear()
    server.shutdown()


def test_a_release_whose_upper_bound_excludes_the_interpreter_is_named(index):
    assert python_support.refused([("numba", "0.52.0"), ("numpy", "1.19.4")], "3.9.18") == ["numba"]
    assert python_support.refused([("numba", "0.52.0")], "3.8.18") == []
    # The first final release after the date that admits 3.9: 0.53.0, not its release candidate.
    assert python_support.first_admitting("numba", "3.9.18", "2020-12-07T00:00:00Z") == ("0.53.0", "2021-03-12T13:40:22Z")
    assert python_support.first_admitting("numba", "3.10.13", "2020-12-07T00:00:00Z") is None


def test_an_unknown_package_or_an_unreachable_index_changes_nothing(index, monkeypatch):
    assert python_support.refused([("not-on-the-index", "1.0")], "3.9.18") == []
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens on port 9
    python_support._releases.cache_clear()
    assert python_support.refused([("numba", "0.52.0")], "3.9.18") == []


def test_the_dated_resolution_takes_the_first_release_that_admits_the_interpreter(index, tmp_path, monkeypatch):
    """uv's side is played from its command line: what it resolves follows the per-package dates it
    is given, as uv's would, and it names llvmlite as hidden by the date until that is lifted too."""
    calls: list[list[str]] = []

    def uv_compile(argv: list[str], log: BuildLog, what: str, cwd: Path | None) -> None:
        calls.append(argv)
        dates = dict(a.split("=", 1) for a in argv[argv.index("--python") + 2:] if re.match(r"^[a-z]+=\d", a))
        floor = "numba>=0.53.0" in Path(argv[3]).read_text().split()
        # As uv does: with llvmlite 0.36 hidden by the date, numba 0.52 is a solution, unless a floor says no.
        if floor and "llvmlite" not in dates:
            raise StepFailed("dated", "hint: `llvmlite` was filtered by `exclude-newer` to only include ...")
        numba = "0.53.0" if floor and dates.get("numba", "") >= "2021-03-12" else "0.52.0"
        Path(argv[argv.index("-o") + 1]).write_text(f"numba=={numba}\nnumpy==1.19.4\n")

    monkeypatch.setattr("issuebench.envs.dated_packages.python_version", lambda _python: "3.9.18")
    log = BuildLog(tmp_path / "build.log")
    resolved = DatedPackages("uv", uv_compile).resolve("python3.9", "2020-12-07T20:00:16Z", {}, ["numba", "numpy"],
                                                      log, "dated")
    assert resolved is not None and ("numba", "0.53.0") in exact_pins(resolved.splitlines())
    assert len(calls) == 3  # the date's answer, then numba lifted, then llvmlite lifted with it
    assert "numba=2021-03-12T23:59:59Z" in calls[-1] and "llvmlite=2021-03-12T23:59:59Z" in calls[-1]
    text = (tmp_path / "build.log").read_text()
    assert "numba taken as of 2021-03-12" in text and "refuses Python 3.9.18" in text
