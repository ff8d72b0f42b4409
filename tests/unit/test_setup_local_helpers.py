"""Causes the twelfth factory run's development repositories showed: a test dependency that is a
folder of the repository (poetry's `{ path = ... }`, uv's path sources), which no index holds; and
a project whose own build reaches for the internet, which no other Python mends."""

from __future__ import annotations

from pathlib import Path

from issuebench.models import EnvSpec
from issuebench.setup.extract import extract
from issuebench.setup.plan import Plan, initial_plan
from issuebench.setup.runner import Run
from issuebench.setup.search import Attempt, Limits, Search
from issuebench.setup.source import SourceTree
from tests.gitrepo import init_repo

HELPER = ("[build-system]\nrequires = ['poetry-core>=1.0.0']\nbuild-backend = 'poetry.core.masonry.api'\n\n"
          "[tool.poetry]\nname = 'helpers'\nversion = '0.1.0'\n")


def _tree(path: Path, pyproject: str, extra: dict[str, str] | None = None) -> SourceTree:
    init_repo(path, {"pyproject.toml": pyproject, "pkg/__init__.py": "", "tests/test_pkg.py": "def test_x():\n    pass\n",
                     "tests/fixtures/helpers/pyproject.toml": HELPER, "tests/fixtures/helpers/helpers/__init__.py": "",
                     **(extra or {})}, date="2025-06-01T00:00:00Z")
    return SourceTree.open(path, "HEAD")


def test_a_poetry_path_dependency_is_installed_from_its_folder_with_its_backend(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "r", "[build-system]\nrequires = ['poetry-core>=2']\n"
                 "build-backend = 'poetry.core.masonry.api'\n\n[tool.poetry]\nname = 'pkg'\nversion = '1.0'\n\n"
                 "[tool.poetry.group.test.dependencies]\npytest = '^8.0'\n"
                 "helpers = { path = './tests/fixtures/helpers' }\n")
    facts = extract(tree)
    assert facts.local_packages == ["./tests/fixtures/helpers"]
    # Not a requirement an index is asked for: the resolver failed on the name, and setup dropped it.
    assert not any(r.startswith("helpers") for r in facts.test_requires)
    plan = initial_plan(facts, tree, date="2025-06-01T00:00:00Z", pythons=["3.12"])
    assert plan.spec.install[-1] == ("python -m pip install --no-deps --no-build-isolation -e ./tests/fixtures/helpers || "
                                     "python -m pip install --no-deps --no-build-isolation ./tests/fixtures/helpers")
    assert any(p.startswith("poetry-core>=1.0.0") or p.startswith("poetry-core>=2") for p in plan.spec.packages)
    assert not any(p.startswith("helpers") for p in plan.spec.packages)


def test_a_uv_path_source_of_a_dependency_group_is_installed_from_its_folder(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "r", "[build-system]\nrequires = ['setuptools>=64']\n"
                 "build-backend = 'setuptools.build_meta'\n\n[project]\nname = 'pkg'\nversion = '1.0'\n\n"
                 "[dependency-groups]\ntest = ['pytest>=8', 'helpers']\n\n"
                 "[tool.uv.sources]\nhelpers = { path = 'tests/fixtures/helpers' }\n")
    facts = extract(tree)
    assert facts.local_packages == ["./tests/fixtures/helpers"]
    assert facts.test_requires == ["pytest>=8"]
    plan = initial_plan(facts, tree, date="2025-06-01T00:00:00Z", pythons=["3.12"])
    assert any(step.startswith("python -m pip install --no-deps --no-build-isolation -e ./tests/fixtures/helpers ||")
               for step in plan.spec.install)


def test_a_path_source_no_test_requirement_names_is_not_installed(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "r", "[project]\nname = 'pkg'\nversion = '1.0'\n\n"
                 "[tool.uv.sources]\nhelpers = { path = 'tests/fixtures/helpers' }\n")
    assert extract(tree).local_packages == []


OWN_BUILD_OFFLINE = """\
$ (sandbox, network=True) python -m pip install --no-deps --no-build-isolation -e .
      File "setuptools/build_meta.py", line 478, in prepare_metadata_for_build_editable
      socket.gaierror: [Errno -2] Name or service not known
      urllib.error.URLError: <urlopen error [Errno -2] Name or service not known>
"""


def _search(tmp_path: Path) -> Search:
    tree = _tree(tmp_path / "r", "[project]\nname = 'pkg'\nversion = '1.0'\n")
    return Search(runner=None, tree=tree, facts=extract(tree), queue=[],  # type: ignore[arg-type]
                  client=None, limits=Limits(4, 0.95, 5, None, None))


def _plan() -> Plan:
    return Plan(spec=EnvSpec(python="3.12", packages=["pytest"]), runner="pytest", pythons=["3.13", "3.12", "3.11"])


def test_a_project_whose_own_build_needs_the_internet_is_not_tried_on_other_pythons(tmp_path: Path) -> None:
    search = _search(tmp_path)
    attempt = Attempt(iteration=1, origin="extracted", python="3.12", stage="build")
    assert search._next_fix(Run("build", log=OWN_BUILD_OFFLINE), _plan(), attempt, "the build failed") is None
    assert attempt.error_kind == "needs_network"


def test_a_dependency_build_that_needs_the_internet_still_tries_another_python(tmp_path: Path) -> None:
    # An sdist of a dependency built in isolation fetches its backend: an older Python may have a wheel.
    log = OWN_BUILD_OFFLINE.replace("-e .", "old-dep==1.0")
    search = _search(tmp_path)
    attempt = Attempt(iteration=1, origin="extracted", python="3.12", stage="build")
    fix = search._next_fix(Run("build", log=log), _plan(), attempt, "the build failed")
    assert fix is not None and fix.plan.spec.python != "3.12"


POETRY_EXTRAS = ("[build-system]\nrequires = ['poetry-core>=1.0.0']\nbuild-backend = 'poetry.core.masonry.api'\n\n"
                 "[tool.poetry]\nname = 'pkg'\nversion = '1.0'\n\n[tool.poetry.dependencies]\npython = '^3.10'\n"
                 "isodate = '*'\nfastapi = {version = '>=0.111,<0.140', optional = true}\n"
                 "django = {version = '>=4.0', optional = true}\n\n"
                 "[tool.poetry.extras]\nfastapi = ['fastapi']\ndjango = ['django']\n\n"
                 "[tool.poetry.group.dev.dependencies]\npytest = '>=8'\n")


def test_the_extras_a_ci_poetry_install_takes_are_installed_with_their_versions(tmp_path: Path) -> None:
    # openapi-core: `poetry install --all-extras` in CI; three test modules import fastapi.
    workflow = "jobs:\n  t:\n    steps:\n      - run: poetry install --all-extras\n      - run: poetry run pytest\n"
    facts = extract(_tree(tmp_path / "all", POETRY_EXTRAS, {".github/workflows/ci.yml": workflow}))
    reqs = facts.all_test_requirements()
    assert "fastapi>=0.111,<0.140" in reqs and "django>=4.0" in reqs
    one = workflow.replace("--all-extras", "-E django")
    reqs = extract(_tree(tmp_path / "one", POETRY_EXTRAS, {".github/workflows/ci.yml": one})).all_test_requirements()
    assert "django>=4.0" in reqs and not any(r.startswith("fastapi") for r in reqs)
    # without such an install, a framework's extra is not a test requirement
    plain = workflow.replace(" --all-extras", "")
    reqs = extract(_tree(tmp_path / "none", POETRY_EXTRAS, {".github/workflows/ci.yml": plain})).all_test_requirements()
    assert not any(r.startswith(("fastapi", "django")) for r in reqs)


def test_the_extras_a_composite_actions_install_takes_are_installed(tmp_path: Path) -> None:
    # nonebot2: the workflow uses ./.github/actions/setup-python, whose step runs `uv sync --all-extras`.
    action = ("runs:\n  using: composite\n  steps:\n    - run: |\n        uv sync --all-extras --locked\n"
              "      shell: bash\n")
    facts = extract(_tree(tmp_path / "action", POETRY_EXTRAS, {".github/actions/setup-python/action.yml": action}))
    reqs = facts.all_test_requirements()
    assert "fastapi>=0.111,<0.140" in reqs and "django>=4.0" in reqs
