"""Setup accepts an environment only when the tests that matter ran, and no test file holds it up.

Real git repositories built here, real uv environments, the real sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from issuebench.setup import setup_repository
from issuebench.setup.pyversions import installed_minors
from tests.gitrepo import init_repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

PYPROJECT = "[tool.pytest.ini_options]\ntestpaths = ['tests']\n"
FAST = "".join(f"def test_fast_{i}():\n    assert 1 + {i} > {i}\n\n" for i in range(6))


@pytest.fixture(autouse=True)
def _needs_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from issuebench.sandbox import get_sandbox

    try:
        get_sandbox()
    except Exception as exc:
        pytest.skip(f"no sandbox: {exc}")
    if "3.11" not in installed_minors():
        pytest.skip("needs Python 3.11")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))


def test_a_slow_test_file_is_cut_for_time_named_and_left_out(tmp_path: Path) -> None:
    # test_ode.py-like: one file whose tests outrun any reasonable wait.
    slow = "import time\n\ndef test_slow_one():\n    time.sleep(120)\n\ndef test_slow_two():\n    time.sleep(120)\n"
    init_repo(tmp_path / "r", {"pyproject.toml": PYPROJECT, "tests/test_fast.py": FAST,
                               "tests/test_slow.py": slow}, date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, file_budget=3, max_iterations=1)
    assert result.success, result.summary()
    assert result.files_cut == ["tests/test_slow.py"]
    # Neither passes nor fails the environment: the slow file's tests are in no count.
    assert (result.tests_run, result.tests_passed, result.failing_tests) == (6, 6, [])
    assert result.seconds < 100                      # not the 240 s its two tests would take
    assert result.summary()["files_cut"] == ["tests/test_slow.py"]


def test_a_suite_that_mostly_skips_is_not_accepted(tmp_path: Path) -> None:
    skipping = "".join(f"import pytest\n\n@pytest.mark.skip(reason='needs hardware')\ndef test_s_{i}():\n    pass\n\n"
                       for i in range(10))
    init_repo(tmp_path / "r", {"pyproject.toml": PYPROJECT, "tests/test_fast.py": FAST,
                               "tests/test_hw.py": skipping}, date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert not result.success
    assert result.tests_skipped == 10 and result.tests_passed == 6
    assert "10 of 16 collected tests skipped" in result.reason


def test_a_test_module_that_fails_to_import_counts_as_its_tests_failing(tmp_path: Path) -> None:
    # One module of four cannot import: a quarter of the suite did not run, not one test in 19.
    files = {"pyproject.toml": PYPROJECT, "tests/test_a.py": FAST, "tests/test_b.py": FAST.replace("fast", "b"),
             "tests/test_c.py": FAST.replace("fast", "c"),
             "tests/test_d.py": "import not_a_module_anywhere\n\n" + FAST.replace("fast", "d")}
    init_repo(tmp_path / "r", files, date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert not result.success
    assert result.unimportable_modules == ["tests/test_d.py"]
    assert result.attempts[0].modules_unimportable == 1
    assert "1 test modules failed to import" in result.attempts[0].refusal
    # The refusal says what to fix: the module's own import error.
    assert "the first: ModuleNotFoundError: No module named 'not_a_module_anywhere'" in result.attempts[0].refusal


# A conftest that ends a session (exit 3, no result) once an earlier session of the same
# environment ran: `what` says which earlier session counts.
_SECOND_SESSION_DIES = """import os, pathlib

MARK = pathlib.Path(__file__).parent / ".sessions"

def pytest_collection_modifyitems(items):
    files = {{os.path.basename(str(i.fspath)) for i in items}}
    seen = set(MARK.read_text().split()) if MARK.exists() else set()
    if {what}:
        os._exit(3)
    MARK.write_text(" ".join(seen | files))
"""


def _seventy_files(conftest: str) -> dict[str, str]:
    # 70 files: judged on a sample of 20, then confirmed on 40.
    files = {"pyproject.toml": PYPROJECT, "tests/conftest.py": conftest}
    files.update({f"tests/test_{i:02d}.py": FAST.replace("fast", f"f{i}") for i in range(70)})
    return files


def test_the_confirmation_run_must_report(tmp_path: Path) -> None:
    # Any session after the first ends with no result: the confirmation reports nothing.
    init_repo(tmp_path / "r", _seventy_files(_SECOND_SESSION_DIES.format(what="seen")), date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert not result.success
    first = result.attempts[0]
    assert "the confirmation run reported no test" in first.judged_on
    assert first.tests_run == 0


def test_the_confirmation_runs_only_files_the_first_sample_did_not(tmp_path: Path) -> None:
    # A session that holds a file an earlier session ran ends with no result: were the first
    # sample's 20 files run again, the confirmation would report nothing.
    init_repo(tmp_path / "r", _seventy_files(_SECOND_SESSION_DIES.format(what="seen & files")),
              date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert result.success, result.summary()
    first = result.attempts[0]
    assert first.judged_on == "40 of 70 test files"
    # Both runs' results are judged: 40 files of 6 tests.
    assert (first.tests_run, first.tests_passed) == (240, 240)


def test_a_file_cut_for_time_in_the_first_sample_is_not_run_again(tmp_path: Path) -> None:
    files = _seventy_files("")
    files["tests/test_00.py"] = "import time\n\ndef test_slow():\n    time.sleep(120)\n"   # in the first sample
    init_repo(tmp_path / "r", files, date="2024-06-01T00:00:00Z")
    said: list[str] = []
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1, file_budget=3, progress=said.append)
    assert result.success, result.summary()
    assert result.files_cut == ["tests/test_00.py"]
    assert sum("tests/test_00.py ran out of its" in line for line in said) == 1, said
    assert result.tests_passed == 39 * 6


def test_a_run_cut_for_its_output_still_counts_what_finished(tmp_path: Path) -> None:
    # tqdm's perf tests print without end; -rA then repeats a passing test's output in its summary,
    # and the run is stopped at the output limit before the summary's per-test lines.
    loud = "def test_loud():\n    for _ in range(300000):\n        print('x' * 100)\n"
    init_repo(tmp_path / "r", {"pyproject.toml": PYPROJECT, "tests/test_fast.py": FAST, "tests/test_loud.py": loud},
              date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert result.success, result.summary()
    assert result.tests_passed == 7


def test_coverage_under_its_fail_under_is_turned_off_in_the_recipe(tmp_path: Path) -> None:
    # yarl's pytest.ini: --cov with a fail-under; a run of a few test files passes every test and
    # exits 1, so eval would find every task unresolved. The configuration says so before any run.
    init_repo(tmp_path / "r", {
        "pyproject.toml": "[project]\nname = 'pkg'\nversion = '1.0'\n[project.optional-dependencies]\n"
                          "test = ['pytest', 'pytest-cov']\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n"
                          "addopts = '--cov=pkg --cov-fail-under=100'\n",
        "pkg/__init__.py": "def f(x):\n    if x:\n        return 1\n    return 2\n",
        "tests/test_fast.py": "from pkg import f\n\n" + FAST,
    }, date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=2)
    assert result.success, result.summary()
    assert len(result.attempts) == 1 and result.spec.test_cmd.endswith("--no-cov")
    assert any("coverage threshold in pyproject.toml" in note for note in result.spec.notes)


def test_collect_says_each_setup_step_off_a_terminal_and_records_it(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from tests.gitrepo import commit_files, git

    repo = tmp_path / "acme__widgets"
    init_repo(repo, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "def f():\n    return 1\n",
                     "tests/test_fast.py": FAST}, date="2024-06-01T00:00:00Z")
    git(repo, "checkout", "-q", "-b", "fix")
    commit_files(repo, {"pkg/__init__.py": "def f():\n    return 2\n",
                        "tests/test_f.py": "from pkg import f\n\ndef test_f():\n    assert f() == 2\n"},
                 "make f return two", date="2024-06-02T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "fix", "-m", "Merge pull request #7 from dev/fix", date="2024-06-03T00:00:00Z")
    done = subprocess.run([sys.executable, "-m", "issuebench", "collect", str(repo), "--max", "1",
                           "-o", str(tmp_path / "cand.jsonl")], capture_output=True, text=True, timeout=600,
                          check=False, env={**__import__("os").environ, "GITHUB_TOKEN": ""})
    assert done.returncode == 0, done.stderr
    for line in ("collect: candidate 1: acme__widgets-7", "collect: setup 1/1:", "collect: attempt 1 [extracted]",
                 "collect: setup 1/1: accepted"):
        assert line in done.stderr, done.stderr
    [record] = [json.loads(line) for line in (tmp_path / "cand.setup.jsonl").read_text().splitlines()]
    assert record["accepted"] and record["tests_passed"] == record["tests_run"] >= 6
    assert record["tests_skipped"] == 0 and record["modules_unimportable"] == 0 and record["files_cut"] == []


def _setup_with_absent_submodule(tmp_path: Path, module: str, source: str, submodule: str):
    """Setup of a repository with two plain test modules, `module` (which needs `submodule`) and
    that submodule recorded in the tree but absent, as in every clone."""
    from tests.gitrepo import git

    repo = tmp_path / "r"
    init_repo(repo, {"pyproject.toml": PYPROJECT, "tests/test_a.py": FAST, "tests/test_b.py": FAST.replace("fast", "b"),
                     module: source,
                     ".gitmodules": f'[submodule "{submodule}"]\n\tpath = {submodule}\n\turl = x\n'},
              date="2024-06-01T00:00:00Z")
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},{submodule}")
    git(repo, "commit", "-q", "-m", "submodule", date="2024-06-01T00:00:00Z")
    return setup_repository(repo, memory=False, max_iterations=1)


def test_a_test_module_that_needs_an_absent_submodule_is_the_clones_fault(tmp_path: Path) -> None:
    # tomlkit: tests/test_toml_tests.py reads the toml-test suite, a git submodule no clone checks out.
    reader = "import os\n\nCASES = os.listdir(os.path.join(os.path.dirname(__file__), 'toml-test', 'tests'))\n\n" \
             "def test_cases():\n    assert CASES\n"
    result = _setup_with_absent_submodule(tmp_path, "tests/test_toml_tests.py", reader, "tests/toml-test")
    assert result.success, result.summary()
    assert result.unimportable_modules == [] and result.tests_run == 12
    assert any("tests/test_toml_tests.py could not import for want of a git submodule" in n for n in result.spec.notes)


def test_a_test_module_that_raises_its_own_error_for_an_absent_submodule_is_the_clones_fault(tmp_path: Path) -> None:
    # referencing: the module looks for its submodule and raises an error of its own, whose report
    # names no path; its source names the submodule's path in a string.
    reader = ("from pathlib import Path\n\n\nclass SuiteNotFound(Exception):\n    pass\n\n\n"
              "SUITE = Path(__file__).parent.parent / \"suite/tests\"\nif not SUITE.is_dir():\n"
              "    raise SuiteNotFound()\n\n\ndef test_cases():\n    assert SUITE\n")
    result = _setup_with_absent_submodule(tmp_path, "tests/test_suite.py", reader, "suite")
    assert result.success, result.summary()
    assert result.unimportable_modules == [] and result.tests_run == 12
    assert any("tests/test_suite.py could not import for want of a git submodule" in n for n in result.spec.notes)


def test_unittest_discovery_takes_the_repositorys_own_file_pattern(tmp_path: Path) -> None:
    """mkdocs names its test files *_tests.py and runs `unittest discover -p "*tests.py"` from a
    hatch script: discovery's default test*.py found nothing, and every attempt ran 0 tests."""
    cases = "import unittest\n\n\nclass CoreTests(unittest.TestCase):\n" + "".join(
        f"    def test_{i}(self):\n        self.assertEqual({i} + 1, {i + 1})\n\n" for i in range(6))
    pyproject = "[tool.hatch.envs.test.scripts]\ntest = 'python -m unittest discover -s pkg -p \"*tests.py\"'\n"
    init_repo(tmp_path / "r", {"pyproject.toml": pyproject, "pkg/__init__.py": "", "pkg/tests/__init__.py": "",
                               "pkg/tests/core_tests.py": cases}, date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert result.success, result.summary()
    assert (result.tests_run, result.tests_passed) == (6, 6)


def test_a_suite_that_only_reads_an_absent_submodule_is_refused_with_that_reason(tmp_path: Path) -> None:
    # tinycss2: its only test module reads the css-parsing-tests submodule; "no test passed"
    # alone would hide why.
    from tests.gitrepo import git

    reader = "import os\n\nCASES = os.listdir(os.path.join(os.path.dirname(__file__), 'data', 'cases'))\n\n" \
             "def test_cases():\n    assert CASES\n"
    repo = tmp_path / "r"
    init_repo(repo, {"pyproject.toml": PYPROJECT, "tests/test_data.py": reader,
                     ".gitmodules": '[submodule "tests/data"]\n\tpath = tests/data\n\turl = x\n'},
              date="2024-06-01T00:00:00Z")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{git(repo, 'rev-parse', 'HEAD')},tests/data")
    git(repo, "commit", "-q", "-m", "submodule", date="2024-06-01T00:00:00Z")
    result = setup_repository(repo, memory=False, max_iterations=1)
    assert not result.success
    assert "tests/test_data.py could not import for want of a git submodule" in result.reason, result.reason


def test_an_absent_submodule_is_filled_from_a_clone_beside_the_repository(tmp_path: Path) -> None:
    # tinycss2 again, with a clone of css-parsing-tests beside its own (a folder of owner__name
    # clones): the submodule is filled at the commit the tree records, its tests run, and the
    # recipe names the submodule so that eval fills it from --repos too.
    from tests.gitrepo import git

    data = tmp_path / "acme__cases"
    init_repo(data, {"cases/one.json": "[]\n"}, date="2024-05-01T00:00:00Z")
    recorded = git(data, "rev-parse", "HEAD")
    git(data, "rm", "-q", "cases/one.json")           # a later commit without the files: not the one used
    git(data, "commit", "-q", "-m", "later", date="2024-05-02T00:00:00Z")
    reader = "import os\n\nCASES = os.listdir(os.path.join(os.path.dirname(__file__), 'data', 'cases'))\n\n" \
             "def test_cases():\n    assert CASES == ['one.json']\n"
    repo = tmp_path / "r"
    init_repo(repo, {"pyproject.toml": PYPROJECT, "tests/test_data.py": reader,
                     ".gitmodules": '[submodule "tests/data"]\n\tpath = tests/data\n'
                                    '\turl = https://github.com/acme/cases.git\n'},
              date="2024-06-01T00:00:00Z")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{recorded},tests/data")
    git(repo, "commit", "-q", "-m", "submodule", date="2024-06-01T00:00:00Z")
    result = setup_repository(repo, memory=False, max_iterations=1)
    assert result.success, result.summary()
    assert (result.tests_run, result.tests_passed) == (1, 1)
    assert result.spec.submodules == {"tests/data": "acme/cases"}


def test_a_configuration_that_stops_at_the_first_failure_still_has_its_whole_suite_judged(tmp_path: Path) -> None:
    # `addopts = -x`: the first test fails, so without --maxfail=0 nothing else would run (0 passed).
    files = {"pytest.ini": "[pytest]\naddopts = -x\ntestpaths = tests\n", "pyproject.toml": PYPROJECT,
             "tests/test_0.py": "def test_first():\n    assert False\n"}
    files.update({f"tests/test_{c}.py": FAST.replace("fast", c) for c in "abcd"})
    init_repo(tmp_path / "r", files, date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert result.success, result.summary()
    assert (result.tests_run, result.tests_passed) == (25, 24)
    assert "--maxfail=0" in result.spec.test_cmd


def test_a_build_failure_no_signature_knows_is_named_by_its_last_error_line(tmp_path: Path) -> None:
    # elementpath 1.4's builds failed on three Pythons and the result said only "unknown error".
    setup_py = ("from setuptools import setup\n"
                "raise SystemExit('frobnicator error: the widget table is not configured')\n"
                "setup(name='pkg', version='1.0', packages=['pkg'])\n")
    init_repo(tmp_path / "r", {"setup.py": setup_py, "pkg/__init__.py": "", "tests/test_fast.py": FAST},
              date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert not result.success
    assert "frobnicator error: the widget table is not configured" in result.reason, result.reason


def test_tests_that_lean_on_the_ones_before_them_are_judged_in_their_files(tmp_path: Path) -> None:
    # dynaconf-like: each test reads what the one before it in its module left. A large suite is
    # judged on a sample of test ids, where almost each id runs without the one before it.
    chain = ("import pytest\n\nSTATE = {'last': -1}\n\n\n@pytest.mark.parametrize('i', range(700))\n"
             "def test_step(i):\n    assert STATE['last'] == i - 1\n    STATE['last'] = i\n")
    broken = "def test_broken():\n    assert False\n"
    init_repo(tmp_path / "r", {"pyproject.toml": PYPROJECT, "tests/test_fast.py": FAST,
                               "tests/test_chain.py": chain, "tests/test_broken.py": broken},
              date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert result.success, result.summary()
    assert "tests" in result.summary()["judged_on"]          # judged on test ids, not whole files
    # a test that fails in its file too stays failing
    assert result.failing_tests == ["tests/test_broken.py::test_broken"]


def test_a_remembered_recipe_is_judged_on_the_first_sample_alone(tmp_path: Path) -> None:
    from issuebench.setup.memory import RecipeMemory
    from tests.gitrepo import commit_files

    repo = tmp_path / "r"
    init_repo(repo, _seventy_files(""), date="2024-06-01T00:00:00Z")
    memory = RecipeMemory(tmp_path / "memory.sqlite")
    first = setup_repository(repo, memory=memory, max_iterations=1)
    assert first.success and first.attempts[0].judged_on == "40 of 70 test files"
    later = commit_files(repo, {"tests/test_70.py": FAST.replace("fast", "f70")}, "more", date="2024-07-01T00:00:00Z")
    again = setup_repository(repo, commit=later, memory=memory, max_iterations=1)
    assert again.success and again.attempts[0].origin.startswith("memory")
    # confirmed where it was accepted: here the first sample decides (20 files of 6 tests)
    assert again.attempts[0].judged_on == "20 of 71 test files (a remembered recipe: confirmed where it was accepted)"
    assert again.tests_run == 120


def test_xdist_workers_that_collect_different_tests_are_run_in_one_process(tmp_path: Path) -> None:
    # wemake-python-styleguide: `-n=auto` in addopts, parameter ids whose order follows string
    # hashes, which differ from one worker process to the next: the whole run was one error.
    pyproject = ("[project]\nname = 'pkg'\nversion = '1.0'\n\n[project.optional-dependencies]\n"
                 "test = ['pytest', 'pytest-xdist']\n\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n"
                 "addopts = ['-n=2']\n")
    unordered = ("import pytest\n\nNAMES = {" + ", ".join(f"'name{i}'" for i in range(40)) + "}\n\n\n"
                 "@pytest.mark.parametrize('name', NAMES)\ndef test_name(name):\n    assert name.startswith('name')\n")
    init_repo(tmp_path / "r", {"pyproject.toml": pyproject, "pkg/__init__.py": "", "tests/test_fast.py": FAST,
                               "tests/test_names.py": unordered}, date="2025-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=3)
    assert result.success, result.summary()
    assert result.spec.test_cmd.endswith(" -n 0")
    assert result.tests_passed == 46


def test_a_test_file_that_fills_the_memory_limit_is_cut_named_and_left_out(tmp_path: Path) -> None:
    # zarr's benchmarks: one file's tests fill the run's memory limit and the kernel kills the run.
    hog = "def test_fills_memory():\n    blocks = [bytearray(2**28) for _ in range(40)]\n    assert blocks\n"
    init_repo(tmp_path / "r", {"pyproject.toml": PYPROJECT, "tests/test_fast.py": FAST,
                               "tests/test_hog.py": hog}, date="2024-06-01T00:00:00Z")
    said: list[str] = []
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1, progress=said.append)
    assert result.success, result.summary()
    assert result.files_cut == ["tests/test_hog.py"]
    assert (result.tests_run, result.tests_passed, result.failing_tests) == (6, 6, [])
    assert any("tests/test_hog.py filled the memory limit" in line for line in said), said


# A suite whose one test holds 300 threads at once (a JVM's, Spark's, are so many).
_MANY_THREADS = """import threading

def test_many_threads_at_once():
    gate = threading.Event()
    threads = [threading.Thread(target=gate.wait) for _ in range(300)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join()
"""


def test_a_suite_stopped_at_the_process_cap_gets_a_higher_cap_in_its_recipe(tmp_path: Path) -> None:
    init_repo(tmp_path / "r", {"pyproject.toml": PYPROJECT, "tests/test_fast.py": FAST,
                               "tests/test_threads.py": _MANY_THREADS}, date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert result.success, result.summary()
    assert result.attempts[0].error_kind == "process_limit"
    assert result.spec is not None and result.spec.max_procs == 4096
    assert (result.tests_run, result.tests_passed) == (7, 7)


def test_a_file_the_test_recipe_generates_first_is_there_when_setup_judges(tmp_path: Path) -> None:
    # holidays: `make test` compiles the catalogs its tests read before running pytest; setup runs
    # that step before its own test runs, as every graded run then does.
    makefile = "test:\n\tpython scripts/make_data.py\n\tpytest\n"
    script = "from pathlib import Path\n\nPath('tests/data.txt').write_text('42')\n"
    reads = "".join(f"from pathlib import Path\n\n\ndef test_data_{i}():\n    assert Path('tests/data.txt').read_text() == '42'\n\n"
                    for i in range(6))
    init_repo(tmp_path / "r", {"pyproject.toml": PYPROJECT, "Makefile": makefile, "scripts/make_data.py": script,
                               "tests/test_data.py": reads}, date="2024-06-01T00:00:00Z")
    result = setup_repository(tmp_path / "r", memory=False, max_iterations=1)
    assert result.success, result.summary()
    assert result.spec is not None and result.spec.pre_test == ["python scripts/make_data.py >/dev/null 2>&1 || true"]
    assert (result.tests_run, result.tests_passed) == (6, 6)
