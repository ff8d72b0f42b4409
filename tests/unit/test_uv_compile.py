"""Asking uv what a date allows never sends it for an interpreter: it answers for the target version
with the interpreter it has (a download from outside the registries failed after retries here,
about 8 s a question, most of a small repository's setup)."""

from __future__ import annotations

import subprocess
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from issuebench.envs import compile_at_date, uv_binary


def _wheel(folder: Path) -> None:
    with zipfile.ZipFile(folder / "foo-1.0-py3-none-any.whl", "w") as z:
        z.writestr("foo/__init__.py", "")
        z.writestr("foo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: foo\nVersion: 1.0\n")
        z.writestr("foo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\n"
                                              "Tag: py3-none-any\n")
        z.writestr("foo-1.0.dist-info/RECORD", "")


def _version_without_interpreter() -> str:
    uv = uv_binary()
    assert uv, "uv is a dependency of issuebench"
    for version in ("3.8", "3.9", "3.10", "3.12", "3.13"):
        found = subprocess.run([uv, "python", "find", "--no-project", "--no-python-downloads", version],
                               capture_output=True, text=True, check=False)
        if found.returncode != 0:
            return version
    pytest.skip("uv finds an interpreter of every version tried: nothing it would download")


def test_a_question_for_a_python_uv_lacks_downloads_no_interpreter(tmp_path: Path, monkeypatch) -> None:
    asked: list[str] = []

    class Mirror(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Mirror)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        # Where uv would fetch interpreters from: a loopback server that records what it is asked.
        monkeypatch.setenv("UV_PYTHON_INSTALL_MIRROR", f"http://127.0.0.1:{server.server_port}")
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "cache"))
        _wheel(tmp_path)
        done = compile_at_date(["foo"], exclude_newer="2021-05-23T07:39:42Z",
                               python_version=_version_without_interpreter(),
                               extra=["--no-index", "--find-links", str(tmp_path)])
    finally:
        server.shutdown()
    assert done is not None and done.returncode == 0, done and done.stderr
    assert "foo==1.0" in done.stdout
    assert asked == []
