"""A coverage threshold in the repository's pytest configuration, which fails every graded run.

pytest-cov's fail-under is measured over the whole package: the full suite meets it (arrow's
`--cov-fail-under=99`), but a run of a task's few test files never does, so that run exits 1 with
every test passing and no patch could resolve the task. Setup judges on the whole suite and never
sees it; this reads the configuration instead.
"""

from __future__ import annotations

from typing import Any

from issuebench.setup.config_files import pyproject_tool, pytest_addopts, read_ini
from issuebench.setup.source import SourceTree

# (file, section) of coverage's report options in the ini-style files that hold them.
_COVERAGE_SECTIONS = ((".coveragerc", "report"), ("tox.ini", "coverage:report"), ("setup.cfg", "coverage:report"))


def coverage_threshold(tree: SourceTree) -> str | None:
    """Where the configuration sets a coverage threshold that pytest enforces, or None."""
    addopts = pytest_addopts(tree)
    thresholds: list[str] = []
    tool = pyproject_tool(tree)
    report = tool.get("coverage", {}).get("report", {}) if isinstance(tool.get("coverage"), dict) else {}
    if isinstance(report, dict) and _nonzero(report.get("fail_under")):
        thresholds.append("pyproject.toml")
    for path, section in _COVERAGE_SECTIONS:
        cfg = read_ini(tree.read(path))
        if cfg is not None and _nonzero(cfg.get(section, "fail_under", fallback=None)):
            thresholds.append(path)
    for path, value in addopts:
        if "--cov-fail-under" in value:
            return f"{path}'s addopts ({value.strip()[:80]})"
        if "--cov" in value and thresholds:
            return f"{path}'s addopts turn coverage on and {thresholds[0]} sets fail_under"
    return None


def _nonzero(value: Any) -> bool:
    try:
        return value is not None and float(value) > 0
    except (TypeError, ValueError):
        return False
