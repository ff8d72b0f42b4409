"""Fetching an sdist from a simple index page, served by a real HTTP server on loopback."""

import hashlib
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from issuebench.index.fetch import fetch_sdist, sdist_links


@pytest.fixture
def index(tmp_path, monkeypatch):
    data = b"not really a tarball"
    digest = hashlib.sha256(data).hexdigest()
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "Old_Pkg-1.0.tar.gz").write_bytes(data)
    page = tmp_path / "simple" / "old-pkg"
    page.mkdir(parents=True)
    (page / "index.html").write_text(
        f'<a href="../../files/Old_Pkg-1.0.tar.gz#sha256={digest}">Old_Pkg-1.0.tar.gz</a>\n'
        '<a href="../../files/Old_Pkg-1.0-py2.py3-none-any.whl">wheel</a>\n'
        '<a href="../../files/Old_Pkg-1.0.1.tar.gz">a later release</a>\n')
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_port}/simple")
    yield data
    server.shutdown()


def test_the_release_sdist_is_fetched_and_checked(index, tmp_path):
    path = fetch_sdist("old.pkg", "1.0", tmp_path / "dl")
    assert path is not None and path.name == "Old_Pkg-1.0.tar.gz" and path.read_bytes() == index
    assert fetch_sdist("old-pkg", "2.0", tmp_path / "dl") is None


def test_links_match_the_exact_release_only():
    html = '<a href="/f/pkg-1.0.zip">x</a><a href="/f/pkg-1.0.1.tar.gz">y</a><a href="/f/pkg-1.0.whl">z</a>'
    assert [f for f, _, _ in sdist_links(html, "http://h/simple/pkg/", "pkg", "1.0")] == ["pkg-1.0.zip"]


def test_an_sdist_comes_from_the_page_without_pip_preparing_it(index, tmp_path, monkeypatch):
    from issuebench.index import sdists

    def no_pip(*args):
        raise AssertionError(f"pip ran: {args}")

    monkeypatch.setattr(sdists, "_pip", no_pip)
    path = sdists.download_sdist("old-pkg", "1.0", tmp_path / "dl")
    assert path is not None and path.read_bytes() == index
