"""Test logs -> `TestStatusMap`, with parsers registered by name.

Every parser takes the test output text and returns `{test id: TestStatus}`. Names are the
reference harness's (`parse_log_pytest`, `parse_log_jest`, ...) and short aliases without the
`parse_log_` prefix (`pytest`, `jest`, ...), so a row's `log_parser` field from either world
works. `parser_for_repo` gives the parser the reference uses for each of its repositories
(`repos.toml`).

A few of the reference's parsers pick a log format by the task (jekyll and immutable-js changed
runners between rows). `get_parser(name, task)` binds the task to those; without a task they
read every format the repository used, so `get_parser(name)(log)` works for every name.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path

from issuebench.errors import IssuebenchError
from issuebench.models import Task, TestStatusMap
from issuebench.parsers.c_family import (
    parse_log_doctest,
    parse_log_googletest,
    parse_log_jq,
    parse_log_micropython_test,
    parse_log_redis,
)
from issuebench.parsers.cargo import parse_log_cargo
from issuebench.parsers.django import parse_log_django
from issuebench.parsers.evidence import suite_ran
from issuebench.parsers.gotest import parse_log_gotest
from issuebench.parsers.js_repos import (
    parse_log_calypso,
    parse_log_chart_js,
    parse_log_marked,
    parse_log_p5js,
    parse_log_react_pdf,
)
from issuebench.parsers.js_runners import (
    parse_log_immutable_js,
    parse_log_jest,
    parse_log_jest_json,
    parse_log_karma,
    parse_log_tap,
    parse_log_vitest,
)
from issuebench.parsers.junit import parse_log_junit
from issuebench.parsers.jvm import parse_log_ant, parse_log_gradle_custom, parse_log_maven
from issuebench.parsers.markers import (
    END_TEST_OUTPUT,
    EXIT_CODE_MARKER,
    START_TEST_OUTPUT,
    extract_test_output,
    recorded_exit_code,
)
from issuebench.parsers.phpunit import parse_log_phpunit
from issuebench.parsers.pytest_family import (
    parse_log_matplotlib,
    parse_log_pytest,
    parse_log_pytest_options,
    parse_log_pytest_v2,
    parse_log_pytest_v2_legacy,
    parse_log_seaborn,
)
from issuebench.parsers.ruby import (
    parse_log_cucumber,
    parse_log_jekyll,
    parse_log_minitest,
    parse_log_rspec_transformed_json,
    parse_log_ruby_unit,
)
from issuebench.parsers.sympy import parse_log_sympy
from issuebench.parsers.text import strip_ansi
from issuebench.parsers.unittest_log import parse_log_unittest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

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
    # JavaScript and TypeScript
    "parse_log_jest": parse_log_jest,
    "parse_log_jest_json": parse_log_jest_json,
    "parse_log_vitest": parse_log_vitest,
    "parse_log_karma": parse_log_karma,
    "parse_log_tap": parse_log_tap,
    "parse_log_immutable_js": parse_log_immutable_js,
    "parse_log_calypso": parse_log_calypso,
    "parse_log_chart_js": parse_log_chart_js,
    "parse_log_marked": parse_log_marked,
    "parse_log_p5js": parse_log_p5js,
    "parse_log_react_pdf": parse_log_react_pdf,
    # C and C++
    "parse_log_redis": parse_log_redis,
    "parse_log_jq": parse_log_jq,
    "parse_log_doctest": parse_log_doctest,
    "parse_log_micropython_test": parse_log_micropython_test,
    "parse_log_googletest": parse_log_googletest,
    # Go, Rust, Java, PHP, Ruby
    "parse_log_gotest": parse_log_gotest,
    "parse_log_cargo": parse_log_cargo,
    "parse_log_maven": parse_log_maven,
    "parse_log_ant": parse_log_ant,
    "parse_log_gradle_custom": parse_log_gradle_custom,
    "parse_log_phpunit": parse_log_phpunit,
    "parse_log_minitest": parse_log_minitest,
    "parse_log_cucumber": parse_log_cucumber,
    "parse_log_ruby_unit": parse_log_ruby_unit,
    "parse_log_rspec_transformed_json": parse_log_rspec_transformed_json,
    "parse_log_jekyll": parse_log_jekyll,
}

# Parsers that take the task as a second argument (to pick the format a repository's row used).
_TASK_PARSERS = frozenset({"parse_log_jekyll", "parse_log_immutable_js"})

_REPOS_FILE = Path(__file__).with_name("repos.toml")


@functools.lru_cache(maxsize=1)
def _repo_parsers() -> dict[str, str]:
    """The reference's choice per repository (its MAP_REPO_TO_PARSER), read from repos.toml."""
    return dict(tomllib.loads(_REPOS_FILE.read_text(encoding="utf-8"))["repos"])


DEFAULT_PARSER = "parse_log_pytest"


def canonical_name(name: str) -> str:
    """`pytest`, `parse_log_pytest`, ` Pytest ` -> `parse_log_pytest`; unknown names unchanged."""
    key = name.strip().lower().replace("-", "_")
    return key if key.startswith(_PREFIX) else _PREFIX + key


def known_parsers() -> list[str]:
    """Every accepted name: canonical names and their short aliases."""
    names = sorted(_PARSERS)
    return names + sorted(name[len(_PREFIX):] for name in names)


def get_parser(name: str, task: Task | None = None) -> Parser:
    """The parser registered as `name`; with `task`, bound to it when the parser reads the task."""
    canonical = canonical_name(name)
    parser = _PARSERS.get(canonical)
    if parser is None:
        short = ", ".join(sorted(n[len(_PREFIX):] for n in _PARSERS))
        raise IssuebenchError(
            f"unknown log parser {name!r}",
            hint=f"use one of: {short} (each also as parse_log_<name>)",
        )
    if task is not None and canonical in _TASK_PARSERS:
        return functools.partial(parser, task=task)
    return parser


def parser_for_repo(repo: str) -> str:
    """The parser name the reference uses for `repo` ("owner/name"); pytest's for other repos."""
    return _repo_parsers().get(repo.strip(), DEFAULT_PARSER)


def is_reference_repo(repo: str) -> bool:
    return repo.strip() in _repo_parsers()

__all__ = [
    "DEFAULT_PARSER",
    "END_TEST_OUTPUT",
    "EXIT_CODE_MARKER",
    "START_TEST_OUTPUT",
    "Parser",
    "canonical_name",
    "extract_test_output",
    "get_parser",
    "is_reference_repo",
    "known_parsers",
    "parser_for_repo",
    "recorded_exit_code",
    "strip_ansi",
    "suite_ran",
]
