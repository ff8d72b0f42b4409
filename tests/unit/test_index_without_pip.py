"""The package index is found, or a clear error given, in an interpreter that has no pip."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from issuebench.errors import IssuebenchError
from issuebench.index import fetch

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_pip(monkeypatch):
    """`python -m pip` fails and `import pip` fails, as in a venv made by `uv venv`."""
    failed = subprocess.CompletedProcess([], 1, "", "No module named pip")
    monkeypatch.setattr(fetch.subprocess, "run", lambda *a, **k: failed)
    for name in [m for m in sys.modules if m == "pip" or m.startswith("pip.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pip", None)
    for variable in ("PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        monkeypatch.delenv(variable, raising=False)
    fetch._configured_index.cache_clear()
    yield
    fetch._configured_index.cache_clear()


def test_missing_pip_is_a_clear_error_naming_the_fix(no_pip):
    with pytest.raises(IssuebenchError) as caught:
        fetch.index_url()
    assert "pip is not installed" in str(caught.value)
    assert "ensurepip" in caught.value.hint


def test_uv_index_variable_serves_without_pip(no_pip, monkeypatch):
    monkeypatch.setenv("UV_DEFAULT_INDEX", "http://127.0.0.1:9/simple")
    assert fetch.index_url() == "http://127.0.0.1:9/simple"


def test_pip_is_a_declared_requirement():
    # The pass of all 318 rows on a `uv venv` install lost 314 of them to a missing pip.
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "pip" in {Requirement(d).name for d in deps}
