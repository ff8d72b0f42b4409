"""Releases and their sdists, through pip and the index's simple pages."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from issuebench.errors import IssuebenchError
from issuebench.index.fetch import fetch_sdist

_AVAILABLE = re.compile(r"^Available versions:\s*(.+)$", re.MULTILINE)


def index_versions(name: str) -> list[str]:
    """Final releases known to pip's index, oldest first."""
    proc = _pip("index", "versions", name)
    match = _AVAILABLE.search(proc.stdout)
    if proc.returncode != 0 or not match:
        raise IssuebenchError(f"the package index lists no versions of {name!r}: "
                              f"{(proc.stderr.strip().splitlines() or ['no output'])[-1]}",
                              hint="check the project name and that pip can reach its index")
    versions = []
    for text in match.group(1).split(","):
        try:
            version = Version(text.strip())
        except InvalidVersion:
            continue
        if not (version.is_prerelease or version.is_devrelease):
            versions.append(version)
    return [str(v) for v in sorted(set(versions))]


def download_sdist(name: str, version: str, dest: Path) -> Path | None:
    """The sdist of one release, or None when that release has none.

    Straight from the index's simple page first: `pip download` of an sdist prepares its metadata,
    which installs the build requirements and runs the build backend (half a minute and more for a
    project with compiled parts on a machine whose caches are empty), only to keep the archive.
    pip comes second, for what the page cannot give (an extra index or find-links of pip's
    configuration).
    """
    dest.mkdir(parents=True, exist_ok=True)
    try:
        fetched = fetch_sdist(name, version, dest)
    except OSError:
        fetched = None
    if fetched is not None:
        return fetched
    before = set(dest.iterdir())
    proc = _pip("download", "--no-deps", "--no-binary", ":all:", "--no-build-isolation",
                f"{name}=={version}", "-d", str(dest))
    new = [p for p in set(dest.iterdir()) - before if _is_archive(p)]
    if proc.returncode != 0 or not new:
        # --no-build-isolation fails for sdists needing build tools we lack: retry isolated.
        _pip("download", "--no-deps", "--no-binary", ":all:", f"{name}=={version}", "-d", str(dest))
        new = [p for p in set(dest.iterdir()) - before if _is_archive(p)]
    return new[0] if new else None


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True,
                          env=env, check=False, timeout=900)


def _is_archive(path: Path) -> bool:
    return path.name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip"))
