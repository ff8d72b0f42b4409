"""Test logs -> `TestStatusMap`, with parsers registered by name.

Every parser takes the test output text and returns `{test id: TestStatus}`. Names are the
reference harness's (`parse_log_pytest`, `parse_log_django`, ...) and short aliases without the
`parse_log_` prefix (`pytest`, `django`, ...), so a row's `log_parser` field from either world
works. `parser_for_repo` gives the parser the reference uses for each of its repositories.
"""

from __future__ import annotations

from collections.abc import Callable

from issuebench.errors import IssuebenchError
from issuebench.models import TestStatusMap
from issuebench.parsers.django import parse_log_django
from issuebench.parsers.junit import parse_log_junit
from issuebench.parsers.markers import END_TEST_OUTPUT, START_TEST_OUTPUT, extract_test_output
from issuebench.parsers.pytest_family import (
    parse_log_matplotlib,
    parse_log_pytest,
    parse_log_pytest_options,
    parse_log_pytest_v2,
    parse_log_pytest_v2_legacy,
    parse_log_seaborn,
)
from issuebench.parsers.sympy import parse_log_sympy
from issuebench.parsers.unittest_log import parse_log_unittest

Parser = Callable[[str], TestStatusMap]

_PREFIX = "parse_log_"

# Canonical name -> function. Per-repository names of the reference are aliases of a family,
# exactly as the reference defines them.
_PARSERS: dict[str, Parser] = {
    "parse_log_pytest": parse_log_pytest,
    "parse_log_pytest_options": parse_log_pytest_options,
    "parse_log_pytest_v2": parse_log_pytest_v2,
    "parse_log_pytest_v2_legacy": parse_log_pytest_v2_legacy,
    "parse_log_django": parse_log_django,
    "parse_log_sympy": parse_log_sympy,
    "parse_log_matplotlib": parse_log_matplotlib,
    "parse_log_seaborn": parse_log_seaborn,
    "parse_log_unittest": parse_log_unittest,
    "parse_log_junit": parse_log_junit,
    # pytest family, by repository
    "parse_log_astroid": parse_log_pytest,
    "parse_log_flask": parse_log_pytest,
    "parse_log_marshmallow": parse_log_pytest,
    "parse_log_pvlib": parse_log_pytest,
    "parse_log_pyvista": parse_log_pytest,
    "parse_log_sqlfluff": parse_log_pytest,
    "parse_log_xarray": parse_log_pytest,
    "parse_log_pydicom": parse_log_pytest_options,
    "parse_log_requests": parse_log_pytest_options,
    "parse_log_pylint": parse_log_pytest_options,
    "parse_log_astropy": parse_log_pytest_v2,
    "parse_log_scikit": parse_log_pytest_v2,
    "parse_log_sphinx": parse_log_pytest_v2,
}

# The reference's choice per repository (its MAP_REPO_TO_PARSER for Python repositories).
_REPO_PARSERS: dict[str, str] = {
    "astropy/astropy": "parse_log_astropy",
    "django/django": "parse_log_django",
    "marshmallow-code/marshmallow": "parse_log_marshmallow",
    "matplotlib/matplotlib": "parse_log_matplotlib",
    "mwaskom/seaborn": "parse_log_seaborn",
    "pallets/flask": "parse_log_flask",
    "psf/requests": "parse_log_requests",
    "pvlib/pvlib-python": "parse_log_pvlib",
    "pydata/xarray": "parse_log_xarray",
    "pydicom/pydicom": "parse_log_pydicom",
    "pylint-dev/astroid": "parse_log_astroid",
    "pylint-dev/pylint": "parse_log_pylint",
    "pytest-dev/pytest": "parse_log_pytest",
    "pyvista/pyvista": "parse_log_pyvista",
    "scikit-learn/scikit-learn": "parse_log_scikit",
    "sqlfluff/sqlfluff": "parse_log_sqlfluff",
    "sphinx-doc/sphinx": "parse_log_sphinx",
    "sympy/sympy": "parse_log_sympy",
}

DEFAULT_PARSER = "parse_log_pytest"


def canonical_name(name: str) -> str:
    """`pytest`, `parse_log_pytest`, ` Pytest ` -> `parse_log_pytest`; unknown names unchanged."""
    key = name.strip().lower().replace("-", "_")
    return key if key.startswith(_PREFIX) else _PREFIX + key


def known_parsers() -> list[str]:
    """Every accepted name: canonical names and their short aliases."""
    names = sorted(_PARSERS)
    return names + sorted(name[len(_PREFIX):] for name in names)


def get_parser(name: str) -> Parser:
    parser = _PARSERS.get(canonical_name(name))
    if parser is None:
        short = ", ".join(sorted(n[len(_PREFIX):] for n in _PARSERS))
        raise IssuebenchError(
            f"unknown log parser {name!r}",
            hint=f"use one of: {short} (each also as parse_log_<name>)",
        )
    return parser


def parser_for_repo(repo: str) -> str:
    """The parser name the reference uses for `repo` ("owner/name"); pytest's for other repos."""
    return _REPO_PARSERS.get(repo.strip(), DEFAULT_PARSER)


def is_reference_repo(repo: str) -> bool:
    return repo.strip() in _REPO_PARSERS


__all__ = [
    "DEFAULT_PARSER",
    "END_TEST_OUTPUT",
    "START_TEST_OUTPUT",
    "Parser",
    "canonical_name",
    "extract_test_output",
    "get_parser",
    "is_reference_repo",
    "known_parsers",
    "parser_for_repo",
]
