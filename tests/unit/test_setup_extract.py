"""Extraction reads each kind of source at the requested commit, and plans from what it read."""

from __future__ import annotations

from pathlib import Path

import pytest

from issuebench.config import TESTBED_PATH
from issuebench.setup.extract import extract
from issuebench.setup.plan import EDITABLE_INSTALL, initial_plan
from issuebench.setup.requirements import requirement_name
from issuebench.setup.source import SourceTree
from tests.gitrepo import commit_files, init_repo

PKG = {"pkg/__init__.py": "X = 1\n", "tests/test_x.py": "def test_x():\n    assert True\n"}


def _names(reqs: list[str]) -> set[str | None]:
    return {requirement_name(r) for r in reqs}


def _plan(tmp_path: Path, files: dict[str, str], date: str = "2021-06-01T00:00:00Z"):
    init_repo(tmp_path / "r", {**PKG, **files}, date=date)
    tree = SourceTree.open(tmp_path / "r")
    facts = extract(tree)
    return facts, initial_plan(facts, tree, date=tree.date(), pythons=["3.9", "3.8"])


def test_tox_ini_only(tmp_path: Path) -> None:
    facts, plan = _plan(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='pkg', packages=['pkg'])\n",
        "requirements-test.in": "",
        "tox.ini": "[tox]\nenvlist = py{36,37,38}, lint\n\n[testenv]\ndeps =\n    pytest\n"
                   "    py27: mock\n    py{26}: unittest2\n    py{26}: hypothesis<3\n    py{27,36}: hypothesis\n"
                   "    -rreq/extra.txt\ncommands = pytest {posargs} tests\n\n"
                   "[testenv:lint]\ndeps = flake8\ncommands = flake8\n",
        "req/extra.txt": "six>=1.10  # comment\n-e .\n",
        "tests/requirements.txt": "pretend\n",
    })
    assert facts.ci_pythons == {"3.6", "3.7", "3.8"}
    names = _names(plan.spec.packages)
    assert {"pytest", "six", "setuptools", "pretend"} <= names
    assert "mock" not in names and "flake8" not in names   # py27-only factor and lint env dropped
    # Braced Python 2 factors are Python 2's too (python-ecdsa's `py{26}: hypothesis<3`).
    assert "unittest2" not in names and "hypothesis" in plan.spec.packages
    assert plan.runner == "pytest" and plan.spec.log_parser == "pytest"
    assert plan.test_args == ["tests"] and plan.suite_command == "pytest -rA tests"
    assert plan.spec.install == [EDITABLE_INSTALL]


def test_workflow_pip_words_split_as_the_shell_splits_them(tmp_path: Path) -> None:
    """typeguard's CI: `pip install "pip >= 25.1"` is one quoted word (split on spaces, `25.1"`
    became a requirement no installer parses and every build failed), and `--group test` names a
    dependency group, not a package called test."""
    workflow = """
jobs:
  test:
    steps:
      - run: python -m pip install "pip >= 25.1"
      - run: pip install --group test -e .
      - run: pip install -i https://example.org/simple 'mypy >= 1.2; python_version < "3.12"' ; echo done
"""
    facts, plan = _plan(tmp_path, {".github/workflows/test.yml": workflow,
                                   "setup.py": "from setuptools import setup\nsetup(name='pkg')\n"})
    assert facts.test_requires == ['mypy >= 1.2; python_version < "3.12"']
    names = _names(plan.spec.packages)
    assert None not in names and "test" not in names


def test_a_word_no_installer_parses_is_no_requirement() -> None:
    from issuebench.setup.requirements import clean_requirement

    for torn in ('25.1"', "pytest>=", "six>>1", 'mypy; python_version < "3.12'):
        assert clean_requirement(torn) is None, torn
    for kept in ("foo (>=1.0)", 'pytest>=3; python_version < "3.8"', "pkg[extra]>=2,<3", "zope.interface"):
        assert clean_requirement(kept) == kept


def test_github_workflow_only(tmp_path: Path) -> None:
    workflow = """
name: ci
on: [push]
jobs:
  test:
    strategy:
      matrix:
        python-version: [3.7, 3.8, "3.9", 3.10, pypy-3.7]
    steps:
      - uses: actions/setup-python@v2
        with:
          python-version: ${{ matrix.python-version }}
      - run: |
          python -m pip install --upgrade pip
          pip install -e .[testing] hypothesis "attrs>=19"
      - run: python -m pytest -q src/tests
"""
    facts, plan = _plan(tmp_path, {
        ".github/workflows/ci.yml": workflow,
        "pyproject.toml": "[build-system]\nrequires = ['flit_core>=2']\nbuild-backend = 'flit_core.buildapi'\n\n"
                          "[project]\nname = 'pkg'\nrequires-python = '>=3.7'\n"
                          "[project.optional-dependencies]\ntesting = ['pytest-mock']\n",
        "src/tests/test_y.py": "def test_y():\n    pass\n",
    })
    assert facts.ci_pythons == {"3.7", "3.8", "3.9", "3.10"}   # YAML's 3.10 float read right, pypy skipped
    assert "testing" in facts.wanted_extras
    names = _names(plan.spec.packages)
    assert {"flit-core", "pytest-mock", "hypothesis", "attrs", "pytest"} <= names
    assert "setuptools" not in names and "pip" not in names
    assert plan.test_args == ["src/tests"]


def test_setup_cfg_extras_only(tmp_path: Path) -> None:
    facts, plan = _plan(tmp_path, {
        "setup.py": "import setuptools\nsetuptools.setup()\n",
        "setup.cfg": "[metadata]\nname = pkg\n\n[options]\npython_requires = >=3.6\ninstall_requires =\n"
                     "    requests>=2\n\n[options.extras_require]\ntests =\n    pytest>=5\n    freezegun\n"
                     "docs =\n    sphinx\n\n[tool:pytest]\ntestpaths = tests\n",
    })
    assert facts.requires_python == [">=3.6"] and facts.pytest_configured
    names = _names(plan.spec.packages)
    assert {"requests", "pytest", "freezegun"} <= names and "sphinx" not in names
    assert "pytest>=5" in plan.spec.packages                # the more specific requirement wins
    assert plan.test_args == []                              # testpaths is configured


def test_setup_py_ast_names_and_reads_requirements(tmp_path: Path) -> None:
    setup_py = """
from setuptools import setup
deps = open('requirements.txt').read().splitlines()
extras = {'test': ['pytest', 'pkg[speed]']}
extras['speed'] = ['ujson']
setup(name='pkg', install_requires=deps + ['click'], extras_require=extras,
      tests_require=['mock'], python_requires='>=3.6, !=3.7.*', use_2to3=True)
"""
    facts, plan = _plan(tmp_path, {"setup.py": setup_py, "requirements.txt": "pyyaml==5.1\n# c\n"})
    names = _names(plan.spec.packages)
    assert {"pyyaml", "click", "pytest", "mock", "ujson"} <= names   # self extra pkg[speed] expanded
    assert "pkg" not in names
    assert "setuptools<58" in plan.spec.packages                     # use_2to3 needs old setuptools
    assert facts.requires_python == [">=3.6, !=3.7.*"]


def test_reads_files_at_the_commit_not_the_worktree(tmp_path: Path) -> None:
    first = init_repo(tmp_path / "r", {**PKG, "tox.ini": "[testenv]\ndeps = nose\ncommands = nosetests\n"},
                      date="2019-01-01T00:00:00Z")
    commit_files(tmp_path / "r", {"tox.ini": "[testenv]\ndeps = pytest\ncommands = pytest\n"}, "later",
                 date="2022-01-01T00:00:00Z")
    tree = SourceTree.open(tmp_path / "r", first)
    assert tree.date() == "2019-01-01T00:00:00+00:00"
    assert _names(extract(tree).test_requires) == {"nose"}
    out = tree.export(tmp_path / "ws")
    assert "nose" in (out / "tox.ini").read_text()


def test_unittest_only_repo_uses_unittest(tmp_path: Path) -> None:
    _facts, plan = _plan(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='pkg', test_suite='tests')\n"})
    assert plan.runner == "unittest" and plan.spec.log_parser == "unittest"
    assert plan.suite_command == "python -m unittest discover -v -s tests -t ."


def test_django_runner_with_its_settings_from_a_makefile_recipe(tmp_path: Path) -> None:
    # django-debug-toolbar's Makefile: the settings on one line, the command on the continued next.
    _facts, plan = _plan(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='pkg', install_requires=['django'])\n",
        "Makefile": "test:\n\tDJANGO_SETTINGS_MODULE=tests.settings \\\n\t\tpython -m django test $${TEST_ARGS:-tests}\n"})
    assert (plan.runner, plan.spec.log_parser, plan.spec.test_directives) == ("django", "django", "modules")
    assert plan.spec.env_vars["DJANGO_SETTINGS_MODULE"] == "tests.settings"
    assert plan.suite_command == "python -m django test -v 2 --noinput tests"


def test_django_runner_needs_its_settings_and_pytest_wins_when_named(tmp_path: Path) -> None:
    setup_py = "from setuptools import setup\nsetup(name='pkg')\n"
    _facts, plan = _plan(tmp_path / "a", {"setup.py": setup_py, "tox.ini": "[testenv]\ncommands = django-admin test\n"})
    assert plan.runner == "pytest"          # no settings module named: Django's runner cannot start
    facts, plan = _plan(tmp_path / "b", {"setup.py": setup_py,
                                         "tox.ini": "[testenv]\ncommands = django-admin test --settings=tests.conf\n"})
    assert plan.runner == "django" and facts.django_settings == "tests.conf"
    _facts, plan = _plan(tmp_path / "c", {"setup.py": setup_py, "tox.ini": (
        "[testenv]\ndeps = pytest-django\nsetenv = DJANGO_SETTINGS_MODULE=tests.settings\n"
        "commands = python -m django test\n    pytest\n")})
    assert plan.runner == "pytest"          # the project runs pytest too (pytest-django)


def test_broken_config_is_noted_not_fatal(tmp_path: Path) -> None:
    facts, plan = _plan(tmp_path, {"setup.cfg": "not an ini [[[", "pyproject.toml": "= broken"})
    assert any("not parsed" in n for n in facts.notes)
    assert plan.spec.install == []                       # nothing installable: PYTHONPATH instead
    assert plan.spec.env_vars["PYTHONPATH"] == TESTBED_PATH


def test_option_values_are_not_taken_for_paths(tmp_path: Path) -> None:
    _facts, plan = _plan(tmp_path, {
        "benchmark.py": "import missing_tool\n",
        "tox.ini": "[testenv]\ndeps = pytest\ncommands = pytest -v --doctest-modules --ignore benchmark.py "
                   "-k fast {posargs}\n",
    })
    # Run from the root like tox does, keeping what decides collection and dropping the rest.
    assert plan.test_args == ["--doctest-modules", "--ignore", "benchmark.py"]
    assert plan.suite_command == "pytest -rA --doctest-modules --ignore benchmark.py"


def test_quotes_around_words_go_but_marker_quotes_stay(tmp_path: Path) -> None:
    from issuebench.setup.requirements import clean_requirement

    assert clean_requirement("matplotlib; implementation_name != 'pypy'") == \
        "matplotlib; implementation_name != 'pypy'"
    assert clean_requirement('"attrs>=19"') == "attrs>=19"


def test_a_source_without_tests_is_refused_before_any_build(tmp_path: Path) -> None:
    from issuebench.setup import setup_repository

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("X = 1\n")
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='pkg')\n")
    result = setup_repository(tmp_path, memory=False, builder=object(), sandbox=object())
    assert not result.success and result.attempts == [] and "no tests in the source" in result.reason


def test_a_command_that_runs_a_notebook_is_not_the_suite(tmp_path: Path) -> None:
    # tqdm's tox: nbval over a notebook first, then the suite from the root (testpaths = tests;
    # its files are tests_*.py, which the default file patterns do not name).
    init_repo(tmp_path / "r", {
        "pkg/__init__.py": "X = 1\n", "tests/tests_x.py": "def test_x():\n    assert True\n",
        "tests_notebook.ipynb": "{}\n",
        "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\npython_files = ['tests_*.py']\n",
        "tox.ini": "[testenv]\ndeps = pytest\ncommands =\n    pytest -W=ignore tests_notebook.ipynb --nbval\n"
                   "    pytest -k \"not perf\"\n",
    }, date="2023-06-01T00:00:00Z")
    tree = SourceTree.open(tmp_path / "r")
    plan = initial_plan(extract(tree), tree, date=tree.date(), pythons=["3.11"])
    assert plan.test_args == []
    assert plan.suite_command == "pytest -rA"


def test_a_setup_py_with_extensions_rebuilds_them_before_each_test_run(tmp_path: Path) -> None:
    # simplejson: every task changes _speedups.c, which the environment compiled at the base commit.
    _facts, plan = _plan(tmp_path, {
        "setup.py": "from setuptools import setup, Extension\n"
                    "setup(name='pkg', packages=['pkg'], ext_modules=[Extension('pkg._s', ['pkg/_s.c'])])\n",
        "pkg/_s.c": "/* */\n",
    })
    assert plan.spec.pre_test == ["python setup.py build_ext --inplace -q >/dev/null 2>&1 || true"]
    _facts, pure = _plan(tmp_path / "pure", {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n"})
    assert pure.spec.pre_test == []


def test_a_root_requirements_file_that_installs_the_project_is_the_developers(tmp_path: Path) -> None:
    # starlette: pyproject builds with hatchling; requirements.txt, read by scripts/install, holds
    # `-e .[full]` and the test tools. Read as a runtime list it was skipped (a pyproject build).
    pyproject = ('[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
                 '[project]\nname = "pkg"\nversion = "1"\ndependencies = ["anyio"]\n'
                 '[project.optional-dependencies]\nfull = ["httpx"]\n')
    facts, plan = _plan(tmp_path, {**PKG, "pyproject.toml": pyproject,
                                   "requirements.txt": "-e .[full]\n\npytest==8.3.5\ntrio==0.30.0\n"})
    assert {"pytest", "trio"} <= _names(facts.test_requires)
    assert "full" in facts.wanted_extras
    assert {"trio", "httpx"} <= _names(plan.spec.packages)


def test_a_root_requirements_file_of_runtime_pins_stays_the_runtime_list(tmp_path: Path) -> None:
    facts, _ = _plan(tmp_path, {**PKG, "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
                                "requirements.txt": "six>=1.10\n"})
    assert "six" in _names(facts.install_requires) and "six" not in _names(facts.test_requires)


def test_a_setup_cfg_entry_continued_past_a_comment_keeps_its_marker(tmp_path: Path) -> None:
    # jaraco's skeleton (inflect 6.0): `pytest-black >= 0.3.7; \`, a comment line, then the marker.
    # Read line by line, the marker alone became a "requirement" and failed every build.
    cfg = ("[metadata]\nname = pkg\n[options]\npackages = pkg\n[options.extras_require]\ntesting =\n"
           "\tpytest >= 6\n\tpytest-black >= 0.3.7; \\\n\t\t# workaround\n\t\tpython_implementation != \"PyPy\"\n"
           "\tpytest-cov\n")
    facts, plan = _plan(tmp_path, {**PKG, "setup.cfg": cfg, "setup.py": "from setuptools import setup\nsetup()\n"})
    assert 'pytest-black >= 0.3.7; python_implementation != "PyPy"' in facts.extras["testing"]
    assert not any(p.startswith("python_implementation") for p in plan.spec.packages)
    assert "pytest-cov" in _names(plan.spec.packages)


@pytest.mark.parametrize("reporter", ["pytest-pretty", "pytest-modern"])
def test_a_reporter_that_replaces_pytests_summary_lines_is_not_installed(tmp_path: Path, reporter: str) -> None:
    # pydantic-extra-types' dev group brings pytest-pretty, whose table replaces the `-rA` lines the
    # log parser reads: every setup run reported 0 of 624 tests. python-can's test group brings
    # pytest-modern, whose `PASS [1.2ms] path::test` lines did the same to every attempt.
    pyproject = ('[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
                 '[project]\nname = "pkg"\nversion = "1"\n'
                 f'[dependency-groups]\ndev = ["pytest>=8", "{reporter}>=0.7", "dirty-equals"]\n')
    _, plan = _plan(tmp_path, {**PKG, "pyproject.toml": pyproject})
    assert {"pytest", "dirty-equals"} <= _names(plan.spec.packages)
    assert reporter not in _names(plan.spec.packages)


def test_a_dependency_groups_included_groups_are_installed(tmp_path: Path) -> None:
    # pypa/build: `test` includes `test-core`, the only group naming pytest-rerunfailures, whose
    # `flaky` marker its strict-markers run needs; a group that includes itself ends the walk.
    pyproject = ('[build-system]\nrequires = ["flit_core"]\nbuild-backend = "flit_core.buildapi"\n'
                 '[project]\nname = "pkg"\nversion = "1"\n'
                 '[dependency-groups]\n'
                 'test-core = ["pytest-rerunfailures >= 10.2", {include-group = "test"}]\n'
                 'test = ["filelock", {include-group = "test-core"}]\n')
    facts, plan = _plan(tmp_path, {**PKG, "pyproject.toml": pyproject})
    assert facts.test_requires.count("pytest-rerunfailures >= 10.2") == 1
    assert {"filelock", "pytest-rerunfailures"} <= _names(plan.spec.packages)


def test_a_shell_comment_in_a_ci_step_is_no_install(tmp_path: Path) -> None:
    # zope.interface: a comment inside a multi-line run block mentions `pip install`; its words
    # (uses, a, random, temporary, making, this) became packages and failed every build.
    workflow = """
jobs:
  test:
    steps:
      - run: |
          # output (pip install uses a random temporary directory, making this difficult).
          pip install zope.event  # the one it needs
"""
    facts, _ = _plan(tmp_path, {".github/workflows/test.yml": workflow,
                                "setup.py": "from setuptools import setup\nsetup(name='pkg')\n"})
    assert facts.test_requires == ["zope.event"]


def test_an_absent_submodules_url_names_the_repository_to_fill_it_from(tmp_path: Path) -> None:
    gitmodules = ('[submodule "tests/css-parsing-tests"]\n\tpath = tests/css-parsing-tests\n'
                  '\turl = https://github.com/SimonSapin/css-parsing-tests.git\n'
                  '[submodule "vendor/lib"]\n\turl = git@github.com:acme/lib\n\tpath = vendor/lib\n'
                  '[submodule "docs/theme"]\n\tpath = docs/theme\n\turl = ../theme.git\n'
                  '[submodule "held"]\n\tpath = held\n\turl = https://github.com/acme/held\n')
    facts, plan = _plan(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n", ".gitmodules": gitmodules,
                                   "held/file.txt": "present\n"})
    # A relative url names no repository; a submodule the snapshot holds needs no filling.
    assert facts.submodule_repos == {"tests/css-parsing-tests": "SimonSapin/css-parsing-tests",
                                     "vendor/lib": "acme/lib"}
    assert facts.absent_submodules == ["tests/css-parsing-tests", "vendor/lib", "docs/theme"]
    assert plan.spec.submodules == facts.submodule_repos


def test_a_pyx_built_by_a_pyproject_backend_is_built_again_before_the_tests(tmp_path: Path) -> None:
    # propcache: its in-tree backend cythonizes at install and there is no setup.py to build in
    # place; a patch to the .pyx reached the tests only through the install made again.
    from issuebench.setup.plan import REINSTALL

    pyproject = ("[build-system]\nrequires = ['setuptools', 'expandvars']\nbackend-path = ['packaging']\n"
                 "build-backend = 'pep517_backend.hooks'\n[project]\nname = 'x'\n")
    _facts, plan = _plan(tmp_path / "a", {"pyproject.toml": pyproject, "src/x/_helpers_c.pyx": "cdef int a\n"})
    assert plan.spec.pre_test == [REINSTALL]
    _facts, plan = _plan(tmp_path / "b", {"pyproject.toml": pyproject})
    assert plan.spec.pre_test == []


def test_a_command_covering_under_half_the_test_files_does_not_narrow_the_suite(tmp_path: Path) -> None:
    # python-multipart: the one pytest line its files hold is the benchmarks' CI job; setup judged
    # the environment on those 5 tests of 146.
    workflow = "jobs:\n  b:\n    steps:\n      - run: uv run pytest tests/test_benchmarks.py --codspeed\n"
    _facts, plan = _plan(tmp_path, {".github/workflows/benchmark.yml": workflow,
                                    **{f"tests/test_{n}.py": "def test():\n    pass\n"
                                       for n in ("benchmarks", "file", "multipart")}})
    assert plan.test_args == ["tests"]


def test_a_ci_step_run_in_another_projects_folder_installs_nothing_here(tmp_path: Path) -> None:
    # typing_extensions: a job clones pycroscope and installs `pycroscope[tests] @ .` in its folder;
    # the name became a requirement of typing_extensions' own environment and every build failed.
    workflow = """
jobs:
  own:
    steps:
      - run: pip install 'pkg[test] @ .' attrs
  pycroscope:
    steps:
      - run: git clone https://example.invalid/pycroscope.git
      - working-directory: pycroscope
        run: |
          uv pip install -e 'pycroscope[tests] @ .'
          uv pip install -e "pkg @ ../pkg-latest"
  other:
    defaults:
      run:
        working-directory: typeguard
    steps:
      - run: pip install typeguard-extra
"""
    facts, _ = _plan(tmp_path, {".github/workflows/test.yml": workflow,
                                "setup.py": "from setuptools import setup\nsetup(name='pkg')\n"})
    assert _names(facts.test_requires) == {"attrs"}
    assert "test" in facts.wanted_extras


def test_uv_workspace_members_are_installed_from_their_folders(tmp_path: Path) -> None:
    """pystac's uv workspace: pystac-core and its extensions are members no index holds at the
    commit; setup looked each up in the index and was refused ("no release before the date")."""
    member = ("[build-system]\nrequires = ['hatchling']\nbuild-backend = 'hatchling.build'\n"
              "[project]\nname = '{name}'\nversion = '1.0'\ndependencies = [{deps}]\n")
    files = {
        "pyproject.toml": (
            "[build-system]\nrequires = ['hatchling']\nbuild-backend = 'hatchling.build'\n"
            "[project]\nname = 'stac'\nversion = '1.0'\n"
            "dependencies = ['stac-core>=1.0,<2', 'stac-ext-eo', 'attrs']\n"
            "[dependency-groups]\ndev = ['pytest', 'pytest-stac']\n"
            "[tool.uv.sources]\nstac-core = { workspace = true }\nstac-ext-eo = { workspace = true }\n"
            "[tool.uv.workspace]\nmembers = ['core', 'extensions/*', 'pytest-stac']\nexclude = ['extensions/old']\n"),
        "core/pyproject.toml": member.format(name="stac-core", deps="'python-dateutil>=2.7'"),
        "extensions/eo/pyproject.toml": member.format(name="stac-ext-eo", deps="'stac-core', 'stac-ext-view'"),
        "extensions/view/pyproject.toml": member.format(name="stac-ext-view", deps="'stac-core'"),
        "extensions/old/pyproject.toml": member.format(name="stac-ext-old", deps=""),
        "pytest-stac/pyproject.toml": member.format(name="pytest-stac", deps="'pytest'"),
        "tests/test_stac.py": "def test_x():\n    pass\n",
    }
    commit = init_repo(tmp_path / "stac", files)
    facts = extract(SourceTree.open(tmp_path / "stac", commit))
    assert set(facts.local_packages) == {"./core", "./extensions/eo", "./extensions/view", "./pytest-stac"}
    everything = [*facts.install_requires, *facts.test_requires]
    assert not _names(everything) & {"stac-core", "stac-ext-eo", "stac-ext-view", "pytest-stac"}
    assert {"attrs", "python-dateutil"} <= _names(facts.install_requires)


def test_a_switch_the_suite_offers_for_a_run_without_the_network_is_on(tmp_path: Path) -> None:
    """pip-audit's conftest adds --skip-online (its CI, online, never passes it): without it, its
    online tests waited on PyPI until validate's limit and the tasks were refused for time."""
    conftest = ('import pytest\n\n\ndef pytest_addoption(parser):\n    parser.addoption(\n'
                '        "--skip-online",\n        action="store_true",\n        help="skip online tests",\n    )\n'
                '    parser.addoption("--no-network-timeout", action="store", default="5")\n')
    _, plan = _plan(tmp_path, {"test/conftest.py": conftest, "test/test_a.py": "def test_a():\n    pass\n",
                               "requirements-dev.txt": "pytest\n"})
    assert plan.spec.test_cmd.split()[-1] == "--skip-online"
    _, plain = _plan(tmp_path / "other", {"test/conftest.py": conftest.replace('"--skip-online",\n        action="store_true"', '"--online-only", action="store_true"'),
                                          "test/test_a.py": "def test_a():\n    pass\n", "requirements-dev.txt": "pytest\n"})
    assert "--no-network" not in plain.spec.test_cmd and "--online" not in plain.spec.test_cmd


MANAGE_PY = ("#!/usr/bin/env python3\nimport os\nimport sys\n\nif __name__ == '__main__':\n"
             "    os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'settings')\n"
             "    from django.core.management import execute_from_command_line\n"
             "    execute_from_command_line(sys.argv)\n")


def test_django_runner_as_the_projects_manage_py_runs_it(tmp_path: Path) -> None:
    # django-import-export's tox: `coverage run ./tests/manage.py test core`; manage.py sets the
    # settings module `settings`, a module of tests/, the folder Python puts first on the path.
    setup_py = "from setuptools import setup\nsetup(name='pkg', install_requires=['django'])\n"
    tox = "[testenv]\ncommands =\n    python -W error \\\n        -m coverage run \\\n        ./tests/manage.py test core\n"
    facts, plan = _plan(tmp_path / "a", {"setup.py": setup_py, "tox.ini": tox, "tests/manage.py": MANAGE_PY})
    assert (facts.django_settings, facts.django_path) == ("settings", "tests")
    assert (plan.runner, plan.spec.log_parser, plan.spec.test_directives) == ("django", "django", "django")
    assert plan.spec.env_vars == {"DJANGO_SETTINGS_MODULE": "settings", "PYTHONPATH": f"{TESTBED_PATH}/tests"}
    # At the root, with its settings named by the command: labels are dotted from the root.
    tox_root = "[testenv]\ncommands = python manage.py test --settings=proj.test_settings\n"
    facts, plan = _plan(tmp_path / "b", {"setup.py": setup_py, "tox.ini": tox_root, "manage.py": MANAGE_PY})
    assert (facts.django_settings, facts.django_path) == ("proj.test_settings", None)
    assert plan.spec.test_directives == "modules" and "PYTHONPATH" not in plan.spec.env_vars
    # A manage.py the snapshot does not hold names nothing.
    facts, plan = _plan(tmp_path / "c", {"setup.py": setup_py, "tox.ini": tox})
    assert facts.django_settings is None and plan.runner == "pytest"



def test_a_justfile_recipe_running_manage_as_a_module_is_the_test_command(tmp_path: Path) -> None:
    # django-tasks: CI runs `just test`, whose recipe runs the root's manage.py as a module.
    setup_py = "from setuptools import setup\nsetup(name='pkg', install_requires=['django'])\n"
    justfile = ("test *ARGS:\n    python -m manage check\n"
                "    python -m coverage run --source=pkg -m manage test --shuffle --noinput {{ ARGS }}\n")
    manage = MANAGE_PY.replace("'settings'", "'tests.settings'")
    facts, plan = _plan(tmp_path / "a", {"setup.py": setup_py, "justfile": justfile, "manage.py": manage})
    assert any("-m manage test --shuffle --noinput" in c and "{{" not in c for c in facts.test_commands)
    assert (facts.django_settings, facts.django_path) == ("tests.settings", None)
    assert (plan.runner, plan.spec.test_directives) == ("django", "modules")
    assert plan.spec.env_vars == {"DJANGO_SETTINGS_MODULE": "tests.settings"}


def test_a_test_script_ci_runs_gives_its_command_and_the_variables_it_exports(tmp_path: Path) -> None:
    # piccolo: CI runs ./scripts/test-sqlite.sh, which exports the settings module its tests read.
    script = ('#!/bin/bash\n# To run all in a folder tests/\n\nexport PICCOLO_CONF="tests.sqlite_conf"\n'
              'export PATH="/opt/bin:$PATH"\npython -m pytest \\\n    --cov=pkg \\\n    -m "not integration" \\\n'
              '    -s $@\n')
    # Its postgres job's script, run first, names another settings module: a server no sandbox has.
    workflow = ("jobs:\n  t:\n    steps:\n      - run: pip install pytest\n      - run: ./scripts/test-postgres.sh\n"
                "      - run: ./scripts/test-sqlite.sh\n")
    facts, plan = _plan(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='pkg', packages=['pkg'])\n",
                                   ".github/workflows/ci.yml": workflow, "scripts/test-sqlite.sh": script,
                                   "scripts/test-postgres.sh": script.replace("sqlite", "postgres")})
    assert facts.test_env == {"PICCOLO_CONF": "tests.sqlite_conf"}      # PATH is the sandbox's own
    assert [c for c in facts.test_commands if c.startswith("python -m pytest --cov=pkg")] == [
        'python -m pytest --cov=pkg -m "not integration" -s $@']
    assert plan.spec.env_vars["PICCOLO_CONF"] == "tests.sqlite_conf"


def test_the_scripts_a_makefile_test_recipe_runs_first_become_pre_test_steps(tmp_path: Path) -> None:
    # holidays: `make test` compiles the .mo catalogs its localisation tests read, then runs pytest.
    makefile = ("UV_RUN_CMD = uv run --no-sync\n\nl10n:\n\t$(UV_RUN_CMD) scripts/l10n/generate_po_files.py\n\n"
                "test:\n\t$(UV_RUN_CMD) scripts/l10n/generate_mo_files.py\n\t$(UV_RUN_CMD) pytest --cov=.\n\n"
                "doc:\n\t$(UV_RUN_CMD) scripts/build_docs.py\n")
    facts, plan = _plan(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='pkg', packages=['pkg'])\n",
                                   "Makefile": makefile, "scripts/l10n/generate_mo_files.py": "print('mo')\n",
                                   "scripts/l10n/generate_po_files.py": "", "scripts/build_docs.py": ""})
    assert facts.test_prepare == ["scripts/l10n/generate_mo_files.py"]
    assert plan.spec.pre_test == ["python scripts/l10n/generate_mo_files.py >/dev/null 2>&1 || true"]


def test_a_command_that_runs_only_folders_pytest_never_walks_into_is_no_whole_suite(tmp_path: Path) -> None:
    # Radicale: `pytest integ_tests` (browser tests) in CI and docs, `norecursedirs = ["integ_tests"]`.
    pyproject = ("[project]\nname = 'pkg'\nversion = '1'\n\n[build-system]\nrequires = ['setuptools']\n"
                 "build-backend = 'setuptools.build_meta'\n\n[tool.pytest.ini_options]\nnorecursedirs = ['integ_tests']\n")
    workflow = "jobs:\n  t:\n    steps:\n      - run: pip install pytest\n      - run: pytest integ_tests/ -v\n"
    files = {"pyproject.toml": pyproject, ".github/workflows/ci.yml": workflow,
             **{f"integ_tests/test_ui_{i}.py": "def test_ui():\n    pass\n" for i in range(3)},
             "pkg/tests/test_core.py": "def test_core():\n    pass\n", "pkg/tests/test_more.py": "def test_more():\n    pass\n"}
    _, plan = _plan(tmp_path, files)
    assert "integ_tests" not in plan.test_args


def test_dependencies_a_hatch_metadata_hook_supplies_are_installed(tmp_path: Path) -> None:
    # A project whose `[project]` leaves its dependencies dynamic: uv-dynamic-versioning's hook
    # lists them (one a workspace sibling pinned by a template), hatch-requirements-txt's names files.
    pyproject = ('[build-system]\nrequires = ["hatchling", "uv-dynamic-versioning"]\n'
                 'build-backend = "hatchling.build"\n'
                 '[project]\nname = "pkg"\ndynamic = ["version", "dependencies", "optional-dependencies"]\n'
                 '[tool.hatch.metadata.hooks.uv-dynamic-versioning]\n'
                 'dependencies = ["anyio>=4.9", "pkg-types=={{ version }}"]\n'
                 '[tool.hatch.metadata.hooks.requirements_txt]\nfiles = ["requirements/base.txt"]\n'
                 '[tool.hatch.metadata.hooks.requirements_txt.optional-dependencies]\n'
                 'cli = ["requirements/cli.txt"]\n'
                 '[tool.uv.workspace]\nmembers = ["types"]\n')
    facts, plan = _plan(tmp_path, {**PKG, "pyproject.toml": pyproject,
                                   "requirements/base.txt": "starlette>=0.27\n",
                                   "requirements/cli.txt": "typer\n",
                                   "types/pyproject.toml": '[project]\nname = "pkg-types"\ndependencies = ["pydantic"]\n',
                                   "types/pkg_types/__init__.py": ""})
    assert {"anyio", "starlette", "pydantic"} <= _names(plan.spec.packages)
    assert "./types" in facts.local_packages and "pkg-types" not in _names(plan.spec.packages)
    assert _names(facts.extras["cli"]) == {"typer"}


def test_a_hook_is_not_read_for_dependencies_the_project_lists_itself(tmp_path: Path) -> None:
    pyproject = ('[project]\nname = "pkg"\nversion = "1"\ndependencies = ["six"]\n'
                 '[tool.hatch.metadata.hooks.custom]\ndependencies = ["not-this-one"]\n')
    facts, _ = _plan(tmp_path, {**PKG, "pyproject.toml": pyproject})
    assert _names(facts.install_requires) == {"six"}


def test_the_pins_of_an_extra_ci_installs_win_over_the_projects_ranges(tmp_path: Path) -> None:
    # aiounifi: `aiohttp>3.9` in [project], `aiohttp==3.13.5` in the extra CI installs; its mocks
    # fail under the newest aiohttp the range alone would take at the task's date.
    pyproject = ('[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
                 '[project]\nname = "pkg"\nversion = "1"\ndependencies = ["aiohttp>3.9", "orjson>3.9"]\n'
                 '[project.optional-dependencies]\nrequirements = ["aiohttp==3.13.5", "orjson==3.0"]\n'
                 'requirements-test = ["pytest==9.1.1"]\n')
    workflow = ("jobs:\n  t:\n    steps:\n      - run: pip install \".[requirements, requirements-test]\"\n"
                "      - run: pytest\n")
    _, plan = _plan(tmp_path, {**PKG, "pyproject.toml": pyproject, ".github/workflows/ci.yml": workflow})
    assert "aiohttp==3.13.5" in plan.spec.packages
    # A pin outside the project's own range is not taken for it.
    assert "orjson>3.9" in plan.spec.packages and "orjson==3.0" not in plan.spec.packages


def test_a_matrix_requirements_file_is_read_and_narrows_the_projects_range(tmp_path: Path) -> None:
    # django-cms: CI installs `-r test_requirements/${{ matrix.requirements-file }}`, one file per
    # Django version, which caps django-treebeard below the release that removed what tests call.
    pyproject = ('[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
                 '[project]\nname = "pkg"\nversion = "1"\ndependencies = ["django-treebeard>=4.3"]\n')
    workflow = ("jobs:\n  t:\n    strategy:\n      matrix:\n        requirements-file: [dj-5.2.txt, dj-6.0.txt]\n"
                "    steps:\n      - run: |\n          pip install -r reqs/${{ matrix.requirements-file }}\n"
                "          pytest\n")
    _, plan = _plan(tmp_path, {**PKG, "pyproject.toml": pyproject, ".github/workflows/ci.yml": workflow,
                               "reqs/base.txt": "django-treebeard>=4.3,<6\niptools\n",
                               "reqs/dj-5.2.txt": "-r base.txt\nDjango>=5.2,<6\n",
                               "reqs/dj-6.0.txt": "-r base.txt\nDjango>=6.0,<6.1\n"})
    assert "django-treebeard>=4.3,<6" in plan.spec.packages
    assert "Django>=5.2,<6" in plan.spec.packages and "iptools" in plan.spec.packages


def test_a_docs_requirements_file_is_no_test_requirement(tmp_path: Path) -> None:
    workflow = ("jobs:\n  docs:\n    steps:\n      - run: pip install -r docs/requirements.txt\n"
                "  t:\n    steps:\n      - run: pip install -r requirements-test.txt\n      - run: pytest\n")
    facts, _ = _plan(tmp_path, {**PKG, "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
                                ".github/workflows/ci.yml": workflow,
                                "docs/requirements.txt": "alabaster==1.0.0\n",
                                "requirements-test.txt": "hypothesis\n"})
    assert "hypothesis" in _names(facts.test_requires) and "alabaster" not in _names(facts.test_requires)


def test_pytests_django_settings_option_brings_pytest_django(tmp_path: Path) -> None:
    pyproject = '[project]\nname = "pkg"\nversion = "1"\n[tool.pytest.ini_options]\nDJANGO_SETTINGS_MODULE = "s"\n'
    facts, _ = _plan(tmp_path, {**PKG, "pyproject.toml": pyproject})
    assert "pytest-django" in _names(facts.test_requires)
    facts, _ = _plan(tmp_path / "ini", {**PKG, "pytest.ini": "[pytest]\nDJANGO_SETTINGS_MODULE = s\n"})
    assert "pytest-django" in _names(facts.test_requires)


def test_a_runtests_script_that_sets_django_settings_is_djangos_runner(tmp_path: Path) -> None:
    # wagtail's CI: `coverage run --source wagtail runtests.py`; the script assigns its settings
    # module and calls Django's command line. Without it, pytest ran and no test module imported.
    setup_py = "from setuptools import setup\nsetup(name='pkg', install_requires=['django'])\n"
    workflow = "jobs:\n  t:\n    steps:\n      - run: coverage run --source pkg runtests.py\n"
    runtests = ("import os\nfrom django.core.management import execute_from_command_line\n"
                "os.environ['DJANGO_SETTINGS_MODULE'] = 'pkg.test.settings'\n"
                "execute_from_command_line(['manage.py', 'test'])\n")
    facts, plan = _plan(tmp_path / "a", {"setup.py": setup_py, ".github/workflows/ci.yml": workflow,
                                         "runtests.py": runtests})
    assert (plan.runner, plan.spec.test_directives) == ("django", "modules")
    assert plan.spec.env_vars == {"DJANGO_SETTINGS_MODULE": "pkg.test.settings"}
    # A runtests.py that names no settings module leaves the runner to the other signs.
    facts, plan = _plan(tmp_path / "b", {"setup.py": setup_py, ".github/workflows/ci.yml": workflow,
                                         "runtests.py": "import pytest\npytest.main()\n"})
    assert facts.django_settings is None and plan.runner == "pytest"


def test_packages_for_a_gpu_are_never_installed(tmp_path: Path) -> None:
    # anndata: every extra taken, `cu13 = ["cupy-cuda13x"]` among them; with cupy importable the
    # suite parametrized each array test with it, and every such test failed for want of a GPU.
    pyproject = ('[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
                 '[project]\nname = "pkg"\nversion = "1"\ndependencies = ["numpy"]\n'
                 '[project.optional-dependencies]\ntest = ["pytest"]\ncu13 = ["cupy-cuda13x"]\n'
                 'gpu = ["cupy", "nvidia-cublas-cu12"]\n')
    workflow = "jobs:\n  t:\n    steps:\n      - run: pip install '.[test,cu13,gpu]'\n      - run: pytest\n"
    _, plan = _plan(tmp_path, {**PKG, "pyproject.toml": pyproject, ".github/workflows/ci.yml": workflow})
    assert {"numpy", "pytest"} <= _names(plan.spec.packages)
    assert not {"cupy", "cupy-cuda13x", "nvidia-cublas-cu12"} & _names(plan.spec.packages)


def test_a_command_that_picks_tests_by_marker_is_not_the_suite(tmp_path: Path) -> None:
    # anndata: its GPU job's `pytest -m "array_api or gpu"` was taken for the suite, and setup
    # judged 200 tests that all skip for want of cupy and jax.
    setup_py = "from setuptools import setup\nsetup(name='pkg')\n"
    gpu = "jobs:\n  g:\n    steps:\n      - run: uv run coverage run -m pytest -m \"array_api or gpu\" -n auto\n"
    cpu = "jobs:\n  t:\n    steps:\n      - run: python -m pytest -m \"not slow\" tests\n"
    _, plan = _plan(tmp_path / "a", {**PKG, "setup.py": setup_py, ".github/workflows/gpu.yml": gpu,
                                     ".github/workflows/test.yml": cpu})
    assert "array_api or gpu" not in plan.test_args and "not slow" in plan.test_args
    # The only pytest command there is still says how the suite runs.
    _, plan = _plan(tmp_path / "b", {**PKG, "setup.py": setup_py, ".github/workflows/gpu.yml": gpu})
    assert "array_api or gpu" in plan.test_args


def test_pytest_9s_own_pyproject_table_is_read_as_ini_options_are(tmp_path: Path) -> None:
    """pytest 9 reads `[tool.pytest]` itself (cibuildwheel's); before, only `ini_options` was read."""
    pyproject = ('[project]\nname = "pkg"\nversion = "1"\n\n[tool.pytest]\nminversion = "9.0"\n'
                 'testpaths = ["unit_test"]\nnorecursedirs = ["fixtures"]\n'
                 'markers = ["serial: not in parallel", "online: needs the internet"]\n')
    facts, plan = _plan(tmp_path, {"pyproject.toml": pyproject, "unit_test/test_a.py": "def test():\n    pass\n"})
    assert facts.pytest_configured and facts.pytest_testpaths == ["unit_test"]
    assert facts.pytest_norecurse == ["fixtures"] and set(facts.pytest_markers) == {"serial", "online"}
    assert "-m 'not online'" in plan.spec.test_cmd
