"""A placeholder release (9999.x, left by a project that moved) is never installed as the era's
release: real uv, real wheels on a local index, both the install and the resolution paths."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from issuebench.envs import dated_packages
from issuebench.envs.build_log import BuildLog, StepFailed
from issuebench.envs.dated_packages import DatedPackages, installed_releases
from issuebench.envs.interpreters import uv_command
from issuebench.models import EnvSpec


def _wheel(folder: Path, name: str, version: str, code: str, requires: str = "") -> None:
    """A minimal pure-Python wheel of one module."""
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + (
        f"Requires-Dist: {requires}\n" if requires else "")
    files = {f"{name}.py": code, f"{info}/METADATA": metadata,
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as whl:
        for path, text in {**files, f"{info}/RECORD": record}.items():
            whl.writestr(path, text)


def _run_host(argv: list[str], log: BuildLog, what: str, cwd: Path | None) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, check=False)
    log.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise StepFailed(f"{what} failed", proc.stdout + proc.stderr)


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    links = tmp_path / "links"
    links.mkdir()
    _wheel(links, "oldname", "1.0", "VALUE = 1\n")
    _wheel(links, "oldname", "9999.9.9", "raise ImportError('oldname is now called newname')\n")
    _wheel(links, "app", "1.0", "import oldname\n", requires="oldname>=0.5")
    monkeypatch.setenv("UV_NO_INDEX", "1")
    monkeypatch.setenv("UV_FIND_LINKS", str(links))
    monkeypatch.setenv("UV_OFFLINE", "1")
    return links


def _venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([uv_command(), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    return venv / "bin" / "python"


def test_an_install_that_took_a_placeholder_takes_the_release_below_it(tmp_path, index) -> None:
    python = _venv(tmp_path)
    log = BuildLog(tmp_path / "build.log")
    argv = [uv_command(), "pip", "install", "--python", str(python), "app"]
    DatedPackages(uv_command(), _run_host).install(argv, EnvSpec(python="3"), [], log, "installing", tmp_path)
    assert dict(installed_releases(str(python)))["oldname"] == "1.0"
    assert any("oldname kept below 9999" in note for note in log.notes)
    imported = subprocess.run([str(python), "-c", "import app"], capture_output=True, text=True, check=False)
    assert imported.returncode == 0, imported.stderr


def test_an_exact_pin_of_a_placeholder_is_left_as_pinned(tmp_path, index) -> None:
    python = _venv(tmp_path)
    log = BuildLog(tmp_path / "build.log")
    argv = [uv_command(), "pip", "install", "--python", str(python), "oldname==9999.9.9"]
    DatedPackages(uv_command(), _run_host).install(argv, EnvSpec(python="3"), [("oldname", "9999.9.9")], log,
                                                   "installing", tmp_path)
    assert dict(installed_releases(str(python)))["oldname"] == "9999.9.9"


def test_a_resolution_never_pins_a_placeholder(tmp_path, index, monkeypatch) -> None:
    # These packages live on the local index only: the public index has nothing to say of their
    # requires-python (the question the resolution asks it after each round).
    monkeypatch.setattr(dated_packages, "refused", lambda pins, python: [])
    python = _venv(tmp_path)
    log = BuildLog(tmp_path / "build.log")
    resolved = DatedPackages(uv_command(), _run_host).resolve(python, "", {}, ["app"], log, "resolving")
    assert resolved is not None and "oldname==1.0" in resolved.splitlines()
    assert any("kept below 9999" in note for note in log.notes)


def test_a_calendar_version_is_no_placeholder() -> None:
    # pdfminer.six numbers its releases by date: kept below 9999, pdfplumber could not install.
    assert dated_packages.placeholder_releases([("pdfminer-six", "20251107"), ("fake-factory", "9999.9.9"),
                                                ("other", "99999.0"), ("calver", "2025.11.7")]) == [
        "fake-factory", "other"]
