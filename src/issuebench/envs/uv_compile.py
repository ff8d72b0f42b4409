"""`uv pip compile` of a few requirements as of a date, for a Python version: the one way setup and
the builds ask uv what a date allows (setuptools of the era, wheels for a Python, build plugins).

uv needs an interpreter to answer for `--python-version X.Y`. When no interpreter of X.Y is one it
can use (pyenv's shims answer only for the global version), it tries to download a managed Python
from outside the package registries; here that fails after retries, about 8 s a question (two
thirds of a 45 s setup of a small repository went there). The answer never depends on it: uv
resolves for the target version with whatever interpreter it has, so downloads are off.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Sequence

from issuebench.envs.interpreters import uv_binary


def compile_at_date(requirements: Iterable[str], *, exclude_newer: str, python_version: str,
                    extra: Sequence[str] = (), timeout: float = 120) -> subprocess.CompletedProcess[str] | None:
    """uv's resolution of `requirements` (stdout: `name==version` lines), or None when uv is absent
    or did not answer in time."""
    uv = uv_binary()
    if not uv:
        return None
    argv = [uv, "pip", "compile", "-", "--exclude-newer", exclude_newer, "--python-version", python_version,
            "--no-python-downloads", "--no-header", "--no-annotate", "--quiet", *extra]
    try:
        return subprocess.run(argv, input="\n".join(requirements), capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
