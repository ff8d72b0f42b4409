"""validate's rows name test targets a Python runner can collect: a test patch of fixture files
(chardet's tests/<encoding>/<sample>.html, turned into cases by its test.py) gave pytest a path it
reported `not found`, and the task was refused for a run in which nothing ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from issuebench.collect.validation import harness_runner
from issuebench.harness.commands import test_command as harness_command
from issuebench.models import EnvSpec, Task
from tests.gitrepo import diff_between, git, init_repo

CASES_FROM_FILES = """\
import pathlib

import pytest


@pytest.mark.parametrize("path", sorted(str(p) for p in pathlib.Path("tests").rglob("*.*")))
def test_sample_is_utf8(path):
    pathlib.Path(path).read_bytes().decode("utf-8")
"""


def _fixture_task(repo: Path, extra: dict[str, str] | None = None) -> Task:
    base = init_repo(repo, {"test.py": CASES_FROM_FILES, "tests/old/a.xml": "<a/>\n",
                            "pytest.ini": "[pytest]\npython_files = test.py\n"})
    head_files = {"tests/new/sample.html": "<p>ok</p>\n", **(extra or {})}
    for rel, text in head_files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a new sample")
    test_patch = diff_between(repo, base, "HEAD")
    git(repo, "checkout", "-q", base)
    return Task(instance_id="o__r-1", repo="o/r", base_commit=base, patch="", test_patch=test_patch)


def _changed(repo: Path, files: dict[str, str], changes: dict[str, str], message: str) -> tuple[str, str]:
    """(base, test patch): `files` committed, then `changes` on top; the clone left at base."""
    base = init_repo(repo, files)
    for rel, text in changes.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    test_patch = diff_between(repo, base, "HEAD")
    git(repo, "checkout", "-q", base)
    return base, test_patch


def _row(tmp_path: Path, task: Task) -> Task:
    recipe = EnvSpec(python="3.11", test_cmd="pytest -rA")
    _, with_env = harness_runner(repos_dir=None, recipe=recipe, no_sandbox=True, work_dir=tmp_path / "work")
    return with_env(task)


def _run(repo: Path, task: Task) -> subprocess.CompletedProcess:
    subprocess.run(["git", "apply"], input=task.test_patch, text=True, cwd=repo, check=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    assert task.env is not None
    return subprocess.run(["bash", "-c", harness_command(task.env, task.test_patch)], cwd=repo, env=env,
                          capture_output=True, text=True)


def test_a_test_patch_of_fixture_files_runs_the_suite(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    row = _row(tmp_path, _fixture_task(repo))
    assert row.env is not None and row.env.test_directives == "none"
    done = _run(repo, row)
    assert done.returncode == 0, done.stdout[-800:]
    assert "PASSED test.py::test_sample_is_utf8[tests/new/sample.html]" in done.stdout


def test_only_the_test_modules_of_a_mixed_patch_are_targets(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    extra = {"tests/test_more.py": "def test_more():\n    pass\n"}
    row = _row(tmp_path, _fixture_task(repo, extra))
    assert row.env is not None and row.env.test_cmd == "pytest -rA tests/test_more.py"
    done = _run(repo, row)
    assert done.returncode == 0 and "PASSED tests/test_more.py::test_more" in done.stdout


def test_a_patch_of_test_modules_keeps_the_recipe(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    task = _fixture_task(repo)
    modules_only = task.model_copy(update={"test_patch": "diff --git a/tests/test_x.py b/tests/test_x.py\n"})
    row = _row(tmp_path, modules_only)
    assert row.env is not None and row.env.test_cmd == "pytest -rA" and row.env.test_directives == "paths"


def test_a_test_module_the_patch_deletes_is_no_target(tmp_path: Path) -> None:
    """vulture moved tests/test_unreachable.py's tests into a new module: pytest, handed the
    deleted path, reported it not found and ran nothing."""
    repo = tmp_path / "repo"
    base = init_repo(repo, {"tests/test_old.py": "def test_old():\n    pass\n"})
    git(repo, "rm", "-q", "tests/test_old.py")
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "tests" / "test_new.py").write_text("def test_new():\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "move the tests")
    test_patch = diff_between(repo, base, "HEAD")
    git(repo, "checkout", "-q", base)
    row = _row(tmp_path, Task(instance_id="o__r-2", repo="o/r", base_commit=base, patch="", test_patch=test_patch))
    assert row.env is not None and row.env.test_cmd == "pytest -rA tests/test_new.py"
    done = _run(repo, row)
    assert done.returncode == 0 and "PASSED tests/test_new.py::test_new" in done.stdout


def test_a_conftest_only_patch_runs_the_suite(tmp_path: Path) -> None:
    """sqlparse changed only tests/conftest.py: pytest, handed it, collected nothing."""
    repo = tmp_path / "repo"
    base, test_patch = _changed(
        repo, {"tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef n():\n    return 1\n",
               "tests/test_n.py": "def test_n(n):\n    assert n == 2\n"},
        {"tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef n():\n    return 2\n"}, "the fixture's new value")
    row = _row(tmp_path, Task(instance_id="o__r-3", repo="o/r", base_commit=base, patch="", test_patch=test_patch))
    assert row.env is not None and row.env.test_cmd == "pytest -rA" and row.env.test_directives == "none"
    done = _run(repo, row)
    assert done.returncode == 0 and "PASSED tests/test_n.py::test_n" in done.stdout


def test_a_python_data_file_of_data_driven_tests_is_no_target(tmp_path: Path) -> None:
    """pycodestyle's test patches add `testing/data/python313.py`, code its tests/test_data.py
    checks for the codes its comments expect: handed to pytest, it errors before and after."""
    repo = tmp_path / "repo"
    checker = ("import pathlib\n\nimport pytest\n\n\n@pytest.mark.parametrize('path', sorted(str(p) for p in "
               "pathlib.Path('testing/data').glob('*.py')))\ndef test_data(path):\n"
               "    assert 'E999' not in pathlib.Path(path).read_text()\n")
    base, test_patch = _changed(repo, {"tests/test_data.py": checker, "testing/data/E1.py": "x = 1\n"},
                                {"testing/data/python313.py": "type X = int  # a syntax this checker reads\n"},
                                "a data file")
    row = _row(tmp_path, Task(instance_id="o__r-4", repo="o/r", base_commit=base, patch="", test_patch=test_patch))
    assert row.env is not None and row.env.test_cmd == "pytest -rA" and row.env.test_directives == "none"
    done = _run(repo, row)
    assert done.returncode == 0 and "PASSED tests/test_data.py::test_data[testing/data/python313.py]" in done.stdout


def _node_row(tmp_path: Path, changes: dict[str, str]) -> Task:
    """terser's layout: scripts.test runs `node test/compress.js && mocha test/mocha`; the files
    under test/compress are inputs test/compress.js reads, not mocha files."""
    repo = tmp_path / "repos" / "o__js"
    package = '{"scripts": {"test": "node test/compress.js && mocha test/mocha"}, "devDependencies": {"mocha": "9"}}'
    base, test_patch = _changed(repo, {"package.json": package, "test/compress.js": "// runs the cases\n",
                                       "test/compress/new.js": "a: { input: {} }\n",
                                       "test/mocha/tokens.js": "it('reads', () => {});\n"}, changes, "tests")
    recipe = EnvSpec(kind="node", test_cmd="./node_modules/.bin/mocha -R tap", log_parser="tap")
    _, with_env = harness_runner(repos_dir=tmp_path / "repos", recipe=recipe, no_sandbox=True,
                                 work_dir=tmp_path / "work")
    return with_env(Task(instance_id="o__js-1", repo="o/js", base_commit=base, patch="", test_patch=test_patch))


def test_a_javascript_runner_is_handed_only_files_under_its_paths(tmp_path: Path) -> None:
    row = _node_row(tmp_path, {"test/compress/new.js": "b: { input: {} }\n",
                               "test/mocha/tokens.js": "it('reads again', () => {});\n"})
    assert row.env is not None and row.env.test_directives == "none"
    assert row.env.test_cmd == "./node_modules/.bin/mocha -R tap test/mocha/tokens.js"


def test_a_javascript_patch_of_runner_inputs_only_runs_the_runner_paths(tmp_path: Path) -> None:
    row = _node_row(tmp_path, {"test/compress/new.js": "b: { input: {} }\n"})
    assert row.env is not None and row.env.test_cmd == "./node_modules/.bin/mocha -R tap test/mocha"


def test_a_helper_handed_to_jest_gives_way_to_the_whole_suite(tmp_path: Path) -> None:
    """xmldom's test patch changed only test/grammar/regexp.js, which its regexp.test.js reads:
    jest, handed it, matched no test file (its testRegex is `.test.js$`) and the run failed."""
    repo = tmp_path / "repos" / "o__js"
    base, test_patch = _changed(repo, {"package.json": '{"scripts": {"test": "jest"}}',
                                       "test/grammar/regexp.js": "module.exports = /a/;\n",
                                       "test/grammar/regexp.test.js": "test('a', () => {});\n"},
                                {"test/grammar/regexp.js": "module.exports = /b/;\n"}, "helper")
    recipe = EnvSpec(kind="node", test_cmd="./node_modules/.bin/jest --verbose --no-color --ci", log_parser="jest")
    _, with_env = harness_runner(repos_dir=tmp_path / "repos", recipe=recipe, no_sandbox=True,
                                 work_dir=tmp_path / "work")
    row = with_env(Task(instance_id="o__js-2", repo="o/js", base_commit=base, patch="", test_patch=test_patch))
    assert row.env is not None and row.env.test_directives == "none"
    assert row.env.test_cmd == "./node_modules/.bin/jest --verbose --no-color --ci"
    named = test_patch.replace("test/grammar/regexp.js", "test/grammar/regexp.test.js")
    kept = with_env(Task(instance_id="o__js-3", repo="o/js", base_commit=base, patch="", test_patch=named))
    assert kept.env is not None and kept.env.test_directives == "paths"
