"""The repository's tool configuration as read from its files: pytest's addopts, pyproject's [tool].

Several setup checks look at the same settings (a coverage threshold, `-x` in addopts), each in the
three or four files pytest and coverage read them from; this reads those files once the same way for
all of them. An unreadable file counts as absent: the repository's own tools would reject it too.
"""

from __future__ import annotations

import configparser
from typing import Any

from issuebench.setup.facts import ini
from issuebench.setup.source import SourceTree
from issuebench.tomlcompat import tomllib

# (file, section) of pytest's options in the ini-style files that hold them.
_PYTEST_SECTIONS = (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


def pytest_addopts(tree: SourceTree) -> list[tuple[str, str]]:
    """(file, value) of each `addopts` the repository's pytest configuration files set."""
    addopts: list[tuple[str, str]] = []
    tool = pyproject_tool(tree)
    options = tool.get("pytest", {}).get("ini_options", {}) if isinstance(tool.get("pytest"), dict) else {}
    if isinstance(options, dict) and options.get("addopts"):
        value = options["addopts"]
        addopts.append(("pyproject.toml", " ".join(value) if isinstance(value, list) else str(value)))
    for path, section in _PYTEST_SECTIONS:
        cfg = read_ini(tree.read(path))
        if cfg is not None and cfg.has_option(section, "addopts"):
            addopts.append((path, cfg.get(section, "addopts")))
    return addopts


def pyproject_tool(tree: SourceTree) -> dict[str, Any]:
    """pyproject.toml's [tool] table ({} when the file is absent or not TOML)."""
    text = tree.read("pyproject.toml")
    try:
        tool = tomllib.loads(text).get("tool", {}) if text else {}
    except tomllib.TOMLDecodeError:
        return {}
    return tool if isinstance(tool, dict) else {}


def read_ini(text: str | None) -> configparser.ConfigParser | None:
    """An ini-style file as configparser reads it, or None when absent or unreadable."""
    try:
        return ini(text) if text else None
    except configparser.Error:
        return None
