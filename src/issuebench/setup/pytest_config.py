"""pytest's own configuration, wherever a repository keeps it: pyproject's
`[tool.pytest.ini_options]` table (or since pytest 9 `[tool.pytest]` itself), or a
`[pytest]`/`[tool:pytest]` section of pytest.ini, tox.ini or setup.cfg. Read once here for every
file: test paths, folders never walked into, pytest-django's settings option, and the markers the
suite declares (name -> description)."""

from __future__ import annotations

import configparser
from typing import Any

from issuebench.setup.facts import Facts


def read_pyproject_pytest(table: Any, facts: Facts) -> None:
    """pyproject's `[tool.pytest]`: its `ini_options` table, or since pytest 9 the options themselves
    (cibuildwheel's `[tool.pytest]` with `markers`, `addopts` and `strict`)."""
    if not isinstance(table, dict):
        return
    if isinstance(table.get("ini_options"), dict):
        read_pytest_table(table["ini_options"], facts)
    native = {key: value for key, value in table.items() if key != "ini_options"}
    if native:
        read_pytest_table(native, facts)


def read_pytest_table(table: dict[str, Any], facts: Facts) -> None:
    """Options of a TOML table: values are TOML strings or lists."""
    facts.pytest_configured = True
    if "DJANGO_SETTINGS_MODULE" in table:   # pytest-django's own option
        facts.test_requires.append("pytest-django")
    facts.pytest_testpaths += _words(table.get("testpaths", []))
    facts.pytest_norecurse += _words(table.get("norecursedirs", []))
    markers = table.get("markers", [])
    facts.pytest_markers.update(parse_markers(markers.splitlines() if isinstance(markers, str) else markers))


def read_pytest_section(cfg: configparser.ConfigParser, section: str, facts: Facts) -> None:
    """An ini file's section: values are text, the markers one per line."""
    facts.pytest_configured = True
    if cfg.has_option(section, "DJANGO_SETTINGS_MODULE"):
        facts.test_requires.append("pytest-django")
    facts.pytest_testpaths += cfg.get(section, "testpaths", fallback="").split()
    facts.pytest_norecurse += cfg.get(section, "norecursedirs", fallback="").split()
    facts.pytest_markers.update(parse_markers(cfg.get(section, "markers", fallback="").splitlines()))


def parse_markers(lines: list[Any]) -> dict[str, str]:
    """`network: needs a connection` lines -> {"network": "needs a connection"}; a marker declared
    with arguments (`slow(reason)`) is named without them."""
    markers: dict[str, str] = {}
    for line in lines:
        if not isinstance(line, str) or not line.strip():
            continue
        name, _, description = line.strip().partition(":")
        name = name.split("(", 1)[0].strip()
        if name.isidentifier():
            markers[name] = description.strip()
    return markers


def _words(value: Any) -> list[str]:
    return value.split() if isinstance(value, str) else [str(v) for v in value]
