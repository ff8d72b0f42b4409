"""What a repository says about installing and testing itself (`Facts`), and the small text
helpers every reader shares."""

from __future__ import annotations

import configparser
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from issuebench.setup.requirements import requirement_name

TEST_EXTRAS = ("test", "tests", "testing", "dev", "develop", "development", "ci")
# In wanted_extras: the repository's own test install takes every extra (`poetry install --all-extras`).
ALL_EXTRAS = "*"
# Django's own test runner, as a project's tox, Makefile or CI runs it (`coverage run -m django test`).
# `python -m manage test` runs a manage.py at the root as a module (django-tasks' justfile).
# A command that runs Django's runner: `manage.py test`, `django-admin test`, or a project's own
# `runtests.py` (wagtail's sets its settings module and calls Django's command line; a
# runtests.py that names no settings module leaves the runner undecided, see runs_django_tests).
DJANGO_TEST = re.compile(r"(?:(?:-m django|-m manage|\bdjango-admin(?:\.py)?|\bmanage\.py) test\b|\bruntests\.py\b)")
_VERSION = re.compile(r"(?<![\d.\w])([23])\.(\d{1,2})(?![\d])")


@dataclass
class Facts:
    """What a repository says about installing and testing itself."""

    name: str | None = None
    requires_python: list[str] = field(default_factory=list)     # specifier strings, all apply
    ci_pythons: set[str] = field(default_factory=set)              # "3.8" etc. from CI, tox, nox
    classifier_pythons: set[str] = field(default_factory=set)
    build_backend: str | None = None
    build_requires: list[str] = field(default_factory=list)
    has_setup_py: bool = False
    has_pyproject_build: bool = False
    install_requires: list[str] = field(default_factory=list)
    setup_requires: list[str] = field(default_factory=list)
    extras: dict[str, list[str]] = field(default_factory=dict)
    wanted_extras: list[str] = field(default_factory=list)        # extras a tox/CI/docs install names
    test_requires: list[str] = field(default_factory=list)        # tests_require, tox deps, CI installs
    test_commands: list[str] = field(default_factory=list)        # raw commands that run tests
    pytest_configured: bool = False
    pytest_testpaths: list[str] = field(default_factory=list)
    pytest_norecurse: list[str] = field(default_factory=list)      # norecursedirs globs
    pytest_markers: dict[str, str] = field(default_factory=dict)   # declared markers: name -> description
    unittest_suite: bool = False
    # The settings module a Django project's own test command runs with (tox's setenv, the
    # command's `DJANGO_SETTINGS_MODULE=` or `--settings`): Django's runner needs it named.
    django_settings: str | None = None
    # The folder of the manage.py those tests run through, when not the root: the settings module
    # and the test labels are importable from there (setup/django_manage.py).
    django_path: str | None = None
    # Variables a repository's own test script exports before its test command (piccolo's
    # scripts/test-sqlite.sh: `export PICCOLO_CONF="tests.sqlite_conf"`): literal values only.
    test_env: dict[str, str] = field(default_factory=dict)
    # The repository's Python scripts its test recipe runs before the tests (holidays' Makefile:
    # scripts/l10n/generate_mo_files.py): run offline before every test run, as pre_test steps.
    test_prepare: list[str] = field(default_factory=list)
    old_build: list[str] = field(default_factory=list)            # signs that need an old setuptools
    sources: dict[str, str] = field(default_factory=dict)         # path -> excerpt (for a model)
    notes: list[str] = field(default_factory=list)
    # Git submodules the snapshot does not hold (a clone has no submodule checkout): test data
    # under them is absent, which no environment can mend.
    absent_submodules: list[str] = field(default_factory=list)
    # Of those, the ones whose .gitmodules url names a repository: folder -> "owner/name", filled
    # from a local clone of it when one is at hand (harness/submodules.py).
    submodule_repos: dict[str, str] = field(default_factory=dict)
    # Folders of the repository that a test dependency installs from (poetry's `{ path = ... }`,
    # uv's path sources): helper packages whose console scripts the tests call (poethepoet's
    # tests/fixtures/packages/poe_test_helpers); no index holds them.
    local_packages: list[str] = field(default_factory=list)

    @property
    def uses_pytest(self) -> bool:
        names = {requirement_name(r) for r in self.all_test_requirements()}
        return (self.pytest_configured or "pytest" in names
                or any(re.search(r"py\.?test", c) for c in self.test_commands))

    @property
    def runs_django_tests(self) -> bool:
        """The repository's own tests run under Django's runner, with a settings module it names."""
        return self.django_settings is not None and any(DJANGO_TEST.search(c) for c in self.test_commands)

    @property
    def unittest_pattern(self) -> str | None:
        """The file pattern of the repository's own `unittest discover` (mkdocs: `-p "*tests.py"`,
        files discovery's default `test*.py` never finds), if it names one."""
        for command in self.test_commands:
            if "unittest" not in command or "discover" not in command:
                continue
            words = split_command(command)
            for i, word in enumerate(words):
                if word in ("-p", "--pattern") and i + 1 < len(words):
                    return words[i + 1]
                if word.startswith("--pattern="):
                    return word.split("=", 1)[1]
        return None

    def all_test_requirements(self) -> list[str]:
        chosen = [e for e in self.extras if e.lower() in TEST_EXTRAS[:3]] or \
                 [e for e in self.extras if e.lower() in TEST_EXTRAS]
        reqs = list(self.test_requires)
        wanted = list(self.extras) if ALL_EXTRAS in self.wanted_extras else self.wanted_extras
        for extra in dict.fromkeys(chosen + [e for e in wanted if e in self.extras]):
            reqs += self.extras[extra]
        return reqs


# -- text helpers ---------------------------------------------------------------------------

def ini(text: str) -> configparser.ConfigParser:
    cfg = configparser.ConfigParser(interpolation=None, strict=False)
    cfg.read_string(text)
    return cfg


def lines(value: str) -> list[str]:
    """The entries of a setup.cfg list, as setuptools reads them: comments dropped, and a line
    ending in a backslash joined to the next entry line (jaraco's skeleton puts a comment line
    between `pytest-black >= 0.3.7; \\` and its marker)."""
    out: list[str] = []
    pending = ""
    for line in value.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending.strip():
        out.append(pending.strip())
    return out


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return lines(value)
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def versions(value: Any) -> set[str]:
    if isinstance(value, float):
        # YAML reads 3.10 as the float 3.1; no CI ever listed Python 3.1.
        text = f"{value}"
        return {"3.10"} if text == "3.1" else {text} if _VERSION.fullmatch(text) else set()
    return {f"{m.group(1)}.{m.group(2)}" for m in _VERSION.finditer(str(value))}


def classifier_versions(classifiers: Any) -> set[str]:
    out = set()
    for item in classifiers or []:
        match = re.search(r"Programming Language :: Python :: (\d\.\d+)\s*$", str(item))
        if match:
            out.add(match.group(1))
    return out


def split_command(command: str) -> list[str]:
    """A command line's words as the shell splits them; split on spaces when its quotes do not pair."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()
