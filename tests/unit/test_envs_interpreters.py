"""find_python: exact versions, the missing-version message, the nearest fallback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from issuebench.envs import find_python
from issuebench.errors import IssuebenchError, MissingSystemPiece

HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"


def test_finds_this_interpreters_version_as_a_real_executable():
    info = find_python(HERE)
    assert info.minor == HERE and not info.fell_back
    assert "shims" not in info.path.parts
    out = subprocess.run([str(info.path), "-c", "import sys; print(sys.version_info[:2])"],
                         capture_output=True, text=True)
    assert out.stdout.strip() == str(sys.version_info[:2])
    assert info.prefix is not None and str(info.path.resolve()).startswith(str(info.prefix))


def test_missing_version_says_what_to_install():
    with pytest.raises(MissingSystemPiece) as exc:
        find_python("3.99")
    text = str(exc.value)
    assert "3.99" in text and "uv python install 3.99" in text and "--python-fallback nearest" in text


def test_nearest_falls_back_and_records_it():
    info = find_python("3.99", "nearest")
    assert info.fell_back and info.requested == "3.99" and info.version.startswith("3.")


def test_bad_arguments_are_named():
    with pytest.raises(IssuebenchError, match=r"X\.Y"):
        find_python("three")
    with pytest.raises(IssuebenchError, match="python-fallback"):
        find_python(HERE, "closest")
