"""A task's version read from its repository: the package's own file, metadata, then the tag;
and the eval hook that uses it for rows without a version (or with one no recipe knows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from issuebench.harness.instance import resolve_task_spec
from issuebench.models import Task
from issuebench.repos.version_rule import find_version
from tests.gitrepo import commit_files, git, init_repo

REAL = Path(__file__).parents[3] / "repos"


def test_own_package_file_beats_vendored_code_and_older_tags(tmp_path: Path) -> None:
    repo = tmp_path / "sympy__sympy"
    init_repo(repo, {"sympy/__init__.py": "from .release import __version__\n",
                     "sympy/release.py": '__version__ = "1.5.dev"\n',
                     # vendored inside the package, as mpmath once was: never the project's version
                     "sympy/mpmath/__init__.py": "__version__ = '0.4'\n"})
    git(repo, "tag", "sympy-1.4")
    head = commit_files(repo, {"sympy/core.py": "x = 1\n"}, "work")
    found = find_version(repo, head, "sympy/sympy")
    assert found is not None and (found.version, found.source) == ("1.5", "sympy/release.py")


def test_scm_project_takes_the_nearest_version_tag_as_written(tmp_path: Path) -> None:
    repo = tmp_path / "pytest"
    init_repo(repo, {"src/_pytest/__init__.py": "from ._version import version\n",
                     "setup.cfg": "[metadata]\nname = pytest\n"})
    git(repo, "tag", "7.4.0")
    before = commit_files(repo, {"a.py": "1\n"}, "after the release")
    commit_files(repo, {"a.py": "2\n"}, "dev marker")
    git(repo, "tag", "8.0.0.dev0")
    git(repo, "tag", "untagged-eb9d2636")  # digits, but not a release
    head = commit_files(repo, {"b.py": "2\n"}, "work")
    assert find_version(repo, head, "pytest-dev/pytest").version == "8.0"
    assert find_version(repo, before, "pytest-dev/pytest").version == "7.4"


def test_metadata_and_numversion(tmp_path: Path) -> None:
    repo = tmp_path / "astroid"
    first = init_repo(repo, {"astroid/__pkginfo__.py": "numversion = (2, 4, 0)\nversion = '.'.join(...)\n"})
    assert find_version(repo, first, "pylint-dev/astroid").version == "2.4"
    other = tmp_path / "tool"
    head = init_repo(other, {"setup.cfg": "[metadata]\nname = tool\nversion = 0.9.1\n"})
    found = find_version(other, head, "me/tool")
    assert (found.version, found.source) == ("0.9", "setup.cfg")


RECIPE = """repo = "me/calc"
[defaults]
test_cmd = "pytest -rA"
[versions."0.12"]
python = "3.10"
[versions."0.20"]
python = "3.11"
[versions."2022.06"]
python = "3.12"
"""


@pytest.fixture()
def calc(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    repo = tmp_path / "me__calc"
    commits = {"0.12": init_repo(repo, {"calc/__init__.py": "def f():\n    return 1\n"})}
    git(repo, "tag", "v0.16.2")
    commits["0.16"] = commit_files(repo, {"calc/x.py": "x = 1\n"}, "work on 0.16")
    commits["2022.06"] = commit_files(repo, {"calc/y.py": "y = 1\n"}, "calendar version")
    git(repo, "tag", "v2022.06.0")
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    (recipes / "me__calc.toml").write_text(RECIPE)
    return repo, recipes, commits


def test_eval_hook_reads_the_version_and_says_so(calc) -> None:
    repo, recipes, commits = calc
    task = Task(instance_id="me__calc-1", repo="me/calc", base_commit=commits["0.16"])
    spec = resolve_task_spec(task, recipes, repo)
    # 0.16 has no recipe table: the nearest one at or below serves, as the reference grouped them.
    assert spec.python == "3.10"
    assert any(n.startswith("version 0.12:") and "no version" in n and "tag v0.16.2" in n for n in spec.notes)
    cal = resolve_task_spec(task.model_copy(update={"base_commit": commits["2022.06"]}), recipes, repo)
    assert cal.python == "3.12" and any(n.startswith("version 2022.06:") for n in cal.notes)


def test_eval_hook_keeps_a_known_version_and_reads_numbers_of_older_rows(calc) -> None:
    repo, recipes, commits = calc
    kept = resolve_task_spec(Task(instance_id="me__calc-2", repo="me/calc", base_commit=commits["0.12"],
                                  version="0.20"), recipes, repo)
    assert kept.python == "3.11" and not any(n.startswith("version ") for n in kept.notes)
    # A row of another generation wrote the version as a JSON number: "0.20" arrives as 0.2.
    text = '{"instance_id": "me__calc-3", "repo": "me/calc", "base_commit": "SHA", "version": 0.2}'
    row = json.loads(text.replace("SHA", commits["0.12"]))
    spec = resolve_task_spec(Task(**row), recipes, repo)
    assert spec.python == "3.11"
    assert any(n.startswith("version 0.20:") and "'0.2'" in n for n in spec.notes)


@pytest.mark.skipif(not (REAL / "sphinx-doc__sphinx").exists(), reason="needs a fetched clone of sphinx")
def test_real_sphinx_rows_get_their_lite_version_back() -> None:
    # sphinx-doc__sphinx-8721 (Lite, version 3.5): the nearest tag says 3.4, the package says 3.5.
    found = find_version(REAL / "sphinx-doc__sphinx", "82ef497a8c88f0f6e50d84520e7276bfbf65025d",
                         "sphinx-doc/sphinx")
    assert found is not None and found.version == "3.5"
