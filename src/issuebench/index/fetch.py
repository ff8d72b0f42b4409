"""Fetch a release's sdist straight from the package index's simple pages.

`pip download` prepares metadata even to download, so the sdist of an old release whose setup.py
no longer runs under today's setuptools cannot be downloaded that way. The simple index (PEP 503)
lists every file; we read it from the index pip is configured with, so no host is named here.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import urllib.request
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urljoin

from packaging.utils import canonicalize_name

from issuebench.errors import IssuebenchError

SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tgz")


def index_url() -> str:
    """The simple index pip uses here: PIP_INDEX_URL, uv's index variables, pip's configuration,
    or pip's own default."""
    for variable in ("PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        if os.environ.get(variable):
            return os.environ[variable]
    return _configured_index()


@lru_cache(maxsize=1)
def _configured_index() -> str:
    # Asked of pip once per process: a dated resolution reads a page per package, and a `pip
    # config` process each time cost seconds apiece on a loaded machine.
    proc = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                          capture_output=True, text=True, check=False)
    if proc.returncode == 0 and proc.stdout.strip():
        return proc.stdout.strip()
    try:
        from pip._internal.models.index import PyPI  # pip's default index, as pip itself names it
    except ImportError:
        # A `uv venv` has no pip unless asked; without this every dated build failed with a bare
        # ModuleNotFoundError instead of saying what to do.
        raise IssuebenchError(f"pip is not installed in {sys.prefix}: issuebench reads the package "
                              "index from pip's configuration",
                              hint=f"run `{sys.executable} -m ensurepip` or `uv pip install pip`, "
                                   "or set PIP_INDEX_URL to the simple index") from None
    return PyPI.simple_url


def sdist_links(html: str, page_url: str, name: str, version: str) -> list[tuple[str, str, str | None]]:
    """(file name, absolute URL, sha256 or None) of the release's sdists listed on a simple page."""
    wanted = canonicalize_name(f"{name}-{version}")
    found = []
    for href in re.findall(r'href="([^"]+)"', html):
        target, _, fragment = href.partition("#")
        filename = unquote(target.rsplit("/", 1)[-1])
        suffix = next((s for s in SDIST_SUFFIXES if filename.lower().endswith(s)), None)
        if suffix is None or canonicalize_name(filename[: -len(suffix)]) != wanted:
            continue
        digest = fragment.split("=", 1)[1] if fragment.startswith("sha256=") else None
        found.append((filename, urljoin(page_url, target), digest))
    return found


def fetch_sdist(name: str, version: str, dest: Path, *, timeout: float = 120) -> Path | None:
    """Download the sdist of name==version into dest; None when the index lists none."""
    page = index_url().rstrip("/") + f"/{canonicalize_name(name)}/"
    request = urllib.request.Request(page, headers={"Accept": "text/html"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        html = response.read().decode("utf-8", errors="replace")
    links = sdist_links(html, page, name, version)
    if not links:
        return None
    filename, url, digest = links[0]
    with urllib.request.urlopen(url, timeout=timeout) as response:
        data = response.read()
    if digest and hashlib.sha256(data).hexdigest() != digest:
        raise OSError(f"{filename}: sha256 does not match the index")
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / filename
    path.write_bytes(data)
    return path
