"""A coverage threshold in the repository's pytest configuration, which fails every graded run.

pytest-cov's fail-under is measured over the whole package: the full suite meets it (arrow's
`--cov-fail-under=99`), but a run of a task's few test files never does, so that run exits 1 with
every test passing and no patch could resolve the task. Setup judges on the whole suite and never
sees it; this reads the configuration instead.
"""

from __future__ import annotations

import configparser
from typing import Any

from issuebench.setup.facts import ini
from issuebench.setup.source import SourceTree
from issuebench.tomlcompat import tomllib

# (file, section) of pytest's options, and of coverage's report options, in the files that hold them.
_PYTEST_SECTIONS = (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))
_COVERAGE_SECTIONS = ((".coveragerc", "report"), ("tox.ini", "coverage:report"), ("setup.cfg", "coverage:report"))


def pytest_addopts(tree: SourceTree) -> list[tuple[str, str]]:
    """(file, value) of each `addopts` the repository's pytest configuration files set."""
    addopts: list[tuple[str, str]] = []
    tool = _tool(tree)
    options = tool.get("pytest", {}).get("ini_options", {}) if isinstance(tool.get("pytest"), dict) else {}
    if isinstance(options, dict) and options.get("addopts"):
        value = options["addopts"]
        addopts.append(("pyproject.toml", " ".join(value) if isinstance(value, list) else str(value)))
    for path, section in _PYTEST_SECTIONS:
        cfg = _ini(tree.read(path))
        if cfg is not None and cfg.has_option(section, "addopts"):
            addopts.append((path, cfg.get(section, "addopts")))
    return addopts


def coverage_threshold(tree: SourceTree) -> str | None:
    """Where the configuration sets a coverage threshold that pytest enforces, or None."""
    addopts = pytest_addopts(tree)
    thresholds: list[str] = []
    tool = _tool(tree)
    report = tool.get("coverage", {}).get("report", {}) if isinstance(tool.get("coverage"), dict) else {}
    if isinstance(report, dict) and _nonzero(report.get("fail_under")):
        thresholds.append("pyproject.toml")
    for path, section in _COVERAGE_SECTIONS:
        cfg = _ini(tree.read(path))
        if cfg is not None and _nonzero(cfg.get(section, "fail_under", fallback=None)):
            thresholds.append(path)
    for path, value in addopts:
        if "--cov-fail-under" in value:
            return f"{path}'s addopts ({value.strip()[:80]})"
        if "--cov" in value and thresholds:
            return f"{path}'s addopts turn coverage on and {thresholds[0]} sets fail_under"
    return None


def _tool(tree: SourceTree) -> dict[str, Any]:
    tool = _toml(tree.read("pyproject.toml")).get("tool", {})
    return tool if isinstance(tool, dict) else {}


def _toml(text: str | None) -> dict[str, Any]:
    try:
        return tomllib.loads(text) if text else {}
    except tomllib.TOMLDecodeError:
        return {}


def _ini(text: str | None) -> configparser.ConfigParser | None:
    try:
        return ini(text) if text else None
    except configparser.Error:
        return None


def _nonzero(value: Any) -> bool:
    try:
        return value is not None and float(value) > 0
    except (TypeError, ValueError):
        return False
