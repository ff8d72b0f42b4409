"""The causes real repositories at real commits showed: namespace imports, git-computed versions,
tox variants, unresolvable test-only requirements, tools against the date, suites too large."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from issuebench.models import EnvSpec
from issuebench.setup import tools
from issuebench.setup.diagnose import diagnose
from issuebench.setup.extract import Facts, extract
from issuebench.setup.plan import Plan, initial_plan
from issuebench.setup.rules import RuleContext, apply_rule
from issuebench.setup.sample import SAMPLE_FILES, pick, plan_samples, sample_command
from issuebench.setup.source import SourceTree
from tests.gitrepo import git, init_repo

PYTHONS = ["3.12", "3.11"]


def _plan(packages: list[str], **spec: object) -> Plan:
    return Plan(spec=EnvSpec(python="3.12", packages=packages, **spec), runner="pytest", pythons=PYTHONS)


def test_dotted_import_of_a_namespace_package_installs_its_distribution(tmp_path: Path) -> None:
    (tmp_path / "sphinx").mkdir()
    (tmp_path / "sphinx" / "__init__.py").write_text("")
    ctx = RuleContext(tree=SourceTree.open(tmp_path), facts=Facts(name="Sphinx", has_setup_py=True))
    log = ("ImportError while loading conftest\n"
           "E   ModuleNotFoundError: No module named 'sphinxcontrib.serializinghtml'\n"
           "E   ModuleNotFoundError: No module named 'zope.interface'\n")
    fix = apply_rule(diagnose(log), _plan(["pytest"]), ctx)
    assert fix is not None
    assert fix.plan.spec.packages == ["pytest", "sphinxcontrib-serializinghtml", "zope.interface"]


def test_own_runtime_requirements_are_kept_even_when_they_look_like_doc_tools(tmp_path: Path) -> None:
    init_repo(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='Sphinx', install_requires=["
                    "'sphinxcontrib-applehelp', 'docutils>=0.12'], extras_require={'test': ['pytest', "
                    "'sphinx-rtd-theme']})\n",
        "tests/test_a.py": "def test_a():\n    pass\n"})
    tree = SourceTree.open(tmp_path)
    plan = initial_plan(extract(tree), tree, date=None, pythons=PYTHONS)
    assert "sphinxcontrib-applehelp" in plan.spec.packages      # runtime: needed to import at all
    assert "sphinx-rtd-theme" not in plan.spec.packages         # a test extra's docs theme: dropped


def test_tox_variant_factors_and_environments_are_skipped(tmp_path: Path) -> None:
    init_repo(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
        "tox.ini": "[tox]\nenvlist = py37, py37-{numpy,twisted}, py37-freeze\n[testenv]\ndeps =\n"
                   "    pygments\n    py37: mock\n    numpy: numpy\n    unittestextras: twisted\n"
                   "    oldattrs: attrs==17.4.0\ncommands = pytest\n\n"
                   "[testenv:py37-freeze]\ndeps = pyinstaller\ncommands = pytest\n\n"
                   "[testenv:py37]\ndeps = hypothesis\n",
        "tests/test_a.py": "def test_a():\n    pass\n"})
    facts = extract(SourceTree.open(tmp_path))
    assert {"pygments", "mock", "hypothesis"} <= set(facts.test_requires)
    assert not {"numpy", "twisted", "attrs==17.4.0", "pyinstaller"} & set(facts.test_requires)


def test_unresolvable_test_only_requirement_is_dropped_before_pins_are_relaxed(tmp_path: Path) -> None:
    ctx = RuleContext(tree=SourceTree.open(tmp_path), facts=Facts(name="pkg", install_requires=["attrs>=17"]))
    log = ("  × No solution found when resolving dependencies:\n  ╰─▶ Because all versions of twisted have a "
           "non-PEP 625-compliant source distribution filename and you require twisted, we can conclude "
           "that your requirements are unsatisfiable.\n")
    plan = _plan(["pytest", "attrs>=17,<18", "twisted"])
    fix = apply_rule(diagnose(log), plan, ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "attrs>=17,<18"]
    assert fix.description == "unresolvable: drop test-only twisted"
    # A runtime requirement the resolver names is not dropped: its pins are relaxed instead.
    again = apply_rule(diagnose(log.replace("twisted", "attrs")), plan, ctx)
    assert again is not None and again.plan.spec.packages == ["pytest", "attrs", "twisted"]

    # sympy 1.9's CI job pins optional test dependencies of 2020: one unresolvable drops them all
    pins = _plan(["pytest", "mpmath==1.2.1", "tensorflow==2.3.1", "h5py==2.10.0", "numpy==1.18.5", "attrs>=17"])
    ctx.facts.install_requires.append("mpmath==1.2.1")
    fix = apply_rule(diagnose(log.replace("twisted", "tensorflow")), pins, ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "mpmath==1.2.1", "attrs>=17"]


def test_workspace_of_a_bare_clone_carries_the_nearest_tag(tmp_path: Path) -> None:
    work = tmp_path / "work"
    first = init_repo(work, {"pkg.py": "x = 1\n", "tests/test_pkg.py": "def test_x():\n    pass\n"})
    git(work, "tag", "5.4.0", first)
    (work / "pkg.py").write_text("x = 2\n")
    git(work, "commit", "-qam", "after the tag")
    bare = tmp_path / "owner__name"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    tree = SourceTree.open(bare)
    assert tree.commit == git(work, "rev-parse", "HEAD") and tree.repo_name() == "owner/name"
    out = tree.export(tmp_path / "ws")
    assert (out / "pkg.py").read_text() == "x = 2\n"
    assert git(out, "describe", "--tags") == "5.4.0"            # setuptools_scm sees 5.4.0, not 0.1.dev1
    with pytest.raises(Exception, match="not found"):
        SourceTree.open(bare, "0" * 40)


def test_large_suite_is_sampled_across_folders_and_confirmed_on_more(tmp_path: Path) -> None:
    files = {f"pkg/sub{i % 5}/tests/test_{i:03}.py": "def test():\n    pass\n" for i in range(150)}
    init_repo(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
                         "tox.ini": "[testenv]\ndeps = pytest\ncommands = pytest pkg --doctest-modules\n",
                         **files})
    tree = SourceTree.open(tmp_path)
    facts = extract(tree)
    plan = initial_plan(facts, tree, date=None, pythons=PYTHONS)
    samples = plan_samples(plan, facts, tree)
    assert samples is not None
    first, confirm = samples
    assert len(first.files) == SAMPLE_FILES and first.total == 150
    assert {f.split("/")[1] for f in first.files} == {f"sub{i}" for i in range(5)}   # every folder
    assert set(first.files) < set(confirm.files)
    command = sample_command(plan, first)
    assert command.startswith("pytest -rA --doctest-modules --continue-on-collection-errors pkg/")
    assert " pkg " not in command + " "                          # the whole folder is not run
    assert pick(["a", "b"], 5) == ["a", "b"]


def test_small_suite_is_run_whole(tmp_path: Path) -> None:
    init_repo(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
                         **{f"tests/test_{i}.py": "def test():\n    pass\n" for i in range(10)}})
    tree = SourceTree.open(tmp_path)
    facts = extract(tree)
    assert plan_samples(initial_plan(facts, tree, date=None, pythons=PYTHONS), facts, tree) is None


def test_setup_tools_are_pinned_to_the_date_and_exempted_for_old_sdist_builds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tools, "dated_tools", lambda python, cutoff: {"setuptools": "30.0.0", "wheel": "0.29.0"})
    plan = _plan(["setuptools", "wheel", "pytest", "setuptools-scm"], exclude_newer="2016-12-03T00:00:00Z")
    plan.spec.python = "3.6"
    dated = tools.with_dated_tools(plan)
    assert dated.spec.packages == ["setuptools==30.0.0", "wheel==0.29.0", "pytest", "setuptools-scm"]
    # uv builds sdist-only dependencies with setuptools>=40.8.0, which no 2016 cutoff admits.
    assert dated.spec.exclude_newer_exempt == ["setuptools", "wheel"]
    # A rule's range keeps the era's release when it fits; a requirement it does not fit stays.
    ranged = tools.with_dated_tools(_plan(["setuptools<58", "wheel>=0.30"], exclude_newer="2016-12-03T00:00:00Z"))
    assert ranged.spec.packages == ["setuptools==30.0.0", "wheel>=0.30"]
    monkeypatch.setattr(tools, "dated_tools", lambda python, cutoff: {"setuptools": "65.0.0"})
    recent = tools.with_dated_tools(_plan(["setuptools"], exclude_newer="2022-09-01T00:00:00Z"))
    assert recent.spec.packages == ["setuptools==65.0.0"] and recent.spec.exclude_newer_exempt == []


def test_sample_skips_input_folders_and_counts_only_the_repositorys_own_tests(tmp_path: Path) -> None:
    from issuebench.models import TestStatus
    from issuebench.setup.sample import counted_here, suite_files

    files = {f"testing/test_{i:03}.py": "def test():\n    pass\n" for i in range(70)}
    init_repo(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
                         "tox.ini": "[pytest]\ntestpaths = testing\nnorecursedirs = testing/generated\n",
                         "testing/example_scripts/test_fails_on_purpose.py": "raise ImportError\n",
                         "testing/generated/test_made.py": "x = 1\n", **files})
    tree = SourceTree.open(tmp_path)
    facts = extract(tree)
    found = suite_files(initial_plan(facts, tree, date=None, pythons=PYTHONS), facts, tree)
    assert len(found) == 70 and all("example_scripts" not in f and "generated" not in f for f in found)
    # pytest's own suite prints its inner sessions' results; they are not the repository's tests.
    statuses = {"testing/test_001.py::test": TestStatus.PASSED, "test_a.py": TestStatus.FAILED,
                "test_bar.py::test_bar[0]": TestStatus.FAILED}
    assert counted_here(statuses, tree) == {"testing/test_001.py::test": TestStatus.PASSED}
    assert counted_here({"test_x (pkg.Tests)": TestStatus.PASSED}, tree) == {"test_x (pkg.Tests)": TestStatus.PASSED}


def test_old_pytest_without_per_test_lines_is_run_verbose() -> None:
    from issuebench.setup.judging import quiet_pytest as _quiet_pytest
    from issuebench.setup.runner import Run

    plan = _plan(["pytest"], test_cmd="pytest -rA")
    run = Run("test", log="collected 779 items\n...\n========== 779 passed in 4.28 seconds ==========\n")
    diagnosis = _quiet_pytest(run, plan)
    assert diagnosis is not None
    fix = apply_rule(diagnosis, plan, RuleContext(tree=None, facts=Facts()))  # type: ignore[arg-type]
    assert fix is not None and fix.plan.spec.log_parser == "pytest_v2"
    assert fix.plan.spec.test_cmd == "pytest -rA -v --override-ini=console_output_style=classic"
    from issuebench.parsers import get_parser

    assert get_parser("pytest_v2")("tests/test_a.py::test_x PASSED\n") == {"tests/test_a.py::test_x": "PASSED"}
    assert _quiet_pytest(Run("test", log="== 3 failed in 1s =="), plan) is None
    # sympy 1.2: the closing line outgrew the terminal, so pytest printed it with no `=` fill
    long_line = " 178 passed, 10 skipped, 1 xfailed, 6 xpassed, 1 warnings, 1 error in 73.92 seconds \n"
    assert _quiet_pytest(Run("test", log="collecting ... \n" + long_line), plan) is not None


def test_suite_of_few_files_but_many_tests_is_sampled_by_test_id() -> None:
    from issuebench.setup.sample import CONFIRM_TESTS, SAMPLE_TESTS, collect_command, id_samples

    plain = [f"tests/test_{i % 7}.py::test_{i}" for i in range(900)]
    log = "\n".join([*plain, "tests/test_p.py::test_p[a b]", "", "901 tests collected in 3.1s"])
    samples = id_samples(log)
    assert samples is not None
    first, confirm = samples
    assert len(first.files) == SAMPLE_TESTS and first.total == 901 and first.describe() == "200 of 901 tests"
    assert len(confirm.files) == CONFIRM_TESTS and set(first.files) < set(confirm.files)
    assert "tests/test_p.py::test_p[a b]" not in confirm.files     # only ids pytest surely finds again
    assert id_samples("\n".join(plain[:500])) is None                  # a small suite runs whole
    plan = _plan(["pytest"], test_cmd="pytest -rA")
    assert collect_command(plan) == "pytest -rA --collect-only -q"


def test_ci_variables_and_job_pins_and_formatted_requirements(tmp_path: Path) -> None:
    workflow = ("jobs:\n  t:\n    steps:\n      - run: pip install sympy-${{ env.release_version }}.tar.gz "
                "numpy==1.18.5 'mpmath>=1.1'\n      - run: pytest pkg/tests/remote --remote-data\n"
                "      - run: pytest pkg\n")
    init_repo(tmp_path, {
        "setup.py": "from setuptools import setup\nv = '0.19'\nsetup(name='pkg', install_requires=['mpmath>=%s' % v,"
                    " f'six>={v}'])\n",
        ".github/workflows/ci.yml": workflow,
        **{f"pkg/tests/test_{i}.py": "def test():\n    pass\n" for i in range(3)},
        "pkg/tests/remote/test_r.py": "def test():\n    pass\n"})
    tree = SourceTree.open(tmp_path)
    facts = extract(tree)
    assert facts.install_requires == ["mpmath>=0.19", "six>=0.19"]
    assert "numpy" in facts.test_requires and not any("$" in r or "release" in r for r in facts.test_requires)
    # The command covering the most test files decides the suite, not the remote-data job listed first.
    assert initial_plan(facts, tree, date=None, pythons=PYTHONS).test_args == ["pkg"]


def test_a_requirement_the_registry_does_not_know_is_dropped_even_when_listed_as_runtime(tmp_path: Path) -> None:
    ctx = RuleContext(tree=SourceTree.open(tmp_path), facts=Facts(name="requests", install_requires=["rudolf2"]))
    log = ("error: No solution found when resolving dependencies\n  cause: Because rudolf2 was not found in the "
           "package registry and you require rudolf2, we can conclude that your requirements are unsatisfiable.\n")
    fix = apply_rule(diagnose(log), _plan(["pytest", "nose", "rudolf2"]), ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "nose"]
    assert fix.description == "unresolvable: drop unknown rudolf2"


def test_forced_colour_codes_are_turned_off() -> None:
    from issuebench.setup.judging import quiet_pytest as _quiet_pytest
    from issuebench.setup.runner import Run

    plan = _plan(["pytest"], test_cmd="pytest -rA")
    log = "\x1b[32mPASSED\x1b[0m tests/test_a.py::test_x\n\x1b[32m===== \x1b[1m550 passed\x1b[0m in 11.96s =====\n"
    diagnosis = _quiet_pytest(Run("test", log=log), plan)
    assert diagnosis is not None and diagnosis.fix == "colour_off"
    fix = apply_rule(diagnosis, plan, RuleContext(tree=None, facts=Facts()))  # type: ignore[arg-type]
    assert fix is not None and fix.plan.spec.test_cmd == "pytest -rA --color=no"


def test_package_without_any_release_before_the_date_is_exempted_from_the_cutoff(tmp_path: Path) -> None:
    from issuebench.setup.requirements import clean_requirement

    ctx = RuleContext(tree=SourceTree.open(tmp_path), facts=Facts(name="pytest", install_requires=["atomicwrites>=1.0"]))
    log = ("  cause: Because there are no versions of atomicwrites and you require atomicwrites>=1.0, we can conclude "
           "that your requirements are unsatisfiable.\n\nhint: `atomicwrites` was filtered by `exclude-newer` to only "
           "include packages uploaded before 2019-05-06T22:36:44Z.\n")
    fix = apply_rule(diagnose(log), _plan(["atomicwrites>=1.0", "py"], exclude_newer="2019-05-06T22:36:44Z"), ctx)
    assert fix is not None and fix.plan.spec.exclude_newer_exempt == ["atomicwrites"]
    assert fix.plan.spec.packages == ["atomicwrites>=1.0", "py"]           # the range still holds
    # a test-only requirement with no release before the date is dropped, never taken from after it
    jax = log.replace("atomicwrites>=1.0", "jaxlib==0.4.1").replace("atomicwrites", "jaxlib")
    fix = apply_rule(diagnose(jax), _plan(["atomicwrites>=1.0", "jaxlib==0.4.1"], exclude_newer="2019-05-06T22:36:44Z"),
                     ctx)
    assert fix is not None and fix.plan.spec.exclude_newer_exempt == []
    assert fix.plan.spec.packages == ["atomicwrites>=1.0"]
    assert clean_requirement("requirements-dev.txt") is None and clean_requirement("six>=1") == "six>=1"
    old_pip = diagnose("ERROR\nno such option: --no-build-isolation\n")
    assert old_pip is not None and old_pip.fix == "legacy_develop"


def test_shell_comments_local_folders_and_dict_setup_options(tmp_path: Path) -> None:
    workflow = ("jobs:\n  t:\n    steps:\n      - run: pip install -U pip  # to ensure version 20 have cache dir\n"
                "      - run: pip install gdcmbin/bin/ dist/ plugins/example numpy\n")
    init_repo(tmp_path, {
        "setup.py": "from setuptools import setup\nNAME = 'pydicom'\nopts = dict(name=NAME, install_requires="
                    "['six'])\nsetup(**opts)\n",
        ".github/workflows/ci.yml": workflow, "tests/test_a.py": "def test():\n    pass\n"})
    facts = extract(SourceTree.open(tmp_path))
    assert facts.name == "pydicom" and facts.install_requires == ["six"]
    assert facts.test_requires == ["numpy"]


def test_tests_that_need_the_internet_are_named_and_not_fixed() -> None:
    log = ("E   requests.exceptions.ConnectionError: HTTPConnectionPool(host='httpbin.org', port=80): "
           "Max retries exceeded (Caused by NewConnectionError('Failed to establish a new connection: "
           "[Errno -3] Temporary failure in name resolution'))\n")
    diagnosis = diagnose(log)
    assert diagnosis is not None and diagnosis.kind == "needs_network"
    assert apply_rule(diagnosis, _plan(["pytest"]), RuleContext(tree=None, facts=Facts())) is None  # type: ignore[arg-type]


def test_a_judging_run_cut_by_the_timeout_still_counts_the_tests_it_finished(tmp_path: Path) -> None:
    from issuebench.setup.judging import judge as _judge
    from issuebench.setup.runner import Run

    init_repo(tmp_path, {"tests/test_a.py": "def test_x():\n    pass\n"})
    tree = SourceTree.open(tmp_path)
    commands: list[str] = []

    class _Runner:
        def test(self, built: object, plan: Plan, command: str, what: str, *, per_file: bool = False) -> Run:
            commands.append(command)
            return Run("test", log="tests/test_a.py::test_x PASSED  [ 50%]\ntests/test_a.py::test_y FAILED\n"
                                   "tests/test_a.py::test_z \n[timeout] the run took over 480s")

    run = _judge(_Runner(), None, _plan(["pytest"]), "pytest -rA tests", "whole suite", tree)  # type: ignore[arg-type]
    assert commands == ["pytest -rA tests -v"]
    assert run.statuses == {"tests/test_a.py::test_x": "PASSED", "tests/test_a.py::test_y": "FAILED"}


def test_a_helper_package_vendored_as_an_absent_submodule_is_a_build_requirement(tmp_path: Path) -> None:
    setup_py = ("import ah_bootstrap\nfrom setuptools import setup\n"
                "from astropy_helpers.setup_helpers import register_commands\nsetup(name='pkg')\n")
    repo = tmp_path / "r"
    init_repo(repo, {"setup.py": setup_py, "ah_bootstrap.py": "", "pkg/__init__.py": "",
                     ".gitmodules": '[submodule "astropy_helpers"]\n\tpath = astropy_helpers\n'
                                    '\turl = https://example.com/astropy-helpers.git\n'
                                    '[submodule "docs_theme"]\n\tpath = docs_theme\n\turl = x\n'})
    # gitlinks as a clone has them: the commit names the submodules, the clone holds none of their files
    head = git(repo, "rev-parse", "HEAD")
    for path in ("astropy_helpers", "docs_theme"):
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},{path}")
    git(repo, "commit", "-q", "-m", "submodules")
    tree = SourceTree.open(repo, commit=git(repo, "rev-parse", "HEAD"))
    facts = extract(tree)
    assert facts.setup_requires == ["astropy-helpers"]      # docs_theme is not imported by setup.py
    plan = initial_plan(facts, tree, date="2017-12-07T00:00:00Z", pythons=["3.6"])
    assert "astropy-helpers" in plan.spec.packages
    assert any("astropy_helpers is not in the snapshot" in n for n in facts.notes)

    # an sdist carries the submodule's files: nothing to add
    init_repo(tmp_path / "sdist", {"setup.py": setup_py, "astropy_helpers/__init__.py": "",
                                   ".gitmodules": '[submodule "h"]\n\tpath = astropy_helpers\n'})
    assert extract(SourceTree.open(tmp_path / "sdist")).setup_requires == []


def test_one_requirement_under_two_markers_keeps_the_one_for_the_chosen_python() -> None:
    from issuebench.setup.requirements import evaluate_markers, merge
    listed = ['more-itertools>=4.0.0,<6.0.0;python_version<="2.7"',
              'more-itertools>=4.0.0;python_version>"2.7"', "six", "six>=1.10"]
    merged = merge(listed)
    assert evaluate_markers(merged, "3.7") == ["more-itertools>=4.0.0", "six>=1.10"]
    assert evaluate_markers(merged, "2.7") == ["more-itertools>=4.0.0,<6.0.0", "six>=1.10"]


def test_classic_style_option_never_swallows_test_paths_and_is_dropped_for_pytest_before_3() -> None:
    import argparse
    import shlex

    from issuebench.setup.rules import CLASSIC_STYLE

    # pytest 3.0-3.2 declare -o/--override-ini with nargs="*": `-o key=value tests` ate the paths
    # (requests 0.14: "-o/--override-ini expects option=value style").
    old = argparse.ArgumentParser()
    old.add_argument("-o", "--override-ini", nargs="*", dest="override_ini")
    old.add_argument("paths", nargs="*")
    parsed = old.parse_args(shlex.split(f"-v {CLASSIC_STYLE} tests/test_a.py")[1:])
    assert parsed.override_ini == ["console_output_style=classic"]
    assert parsed.paths == ["tests/test_a.py"]

    plan = _plan(["pytest"], test_cmd=f"pytest -rA -v {CLASSIC_STYLE}", log_parser="pytest_v2")
    log = f"usage: py.test [options] [file_or_dir] ...\npy.test: error: unrecognized arguments: {CLASSIC_STYLE}\n"
    fix = apply_rule(diagnose(log), plan, RuleContext(tree=None, facts=Facts()))  # type: ignore[arg-type]
    assert fix is not None and fix.plan.spec.test_cmd == "pytest -rA -v"
    assert fix.plan.spec.log_parser == "pytest_v2"
    optparse = "Usage: pytest.py [options] [file_or_dir] [file_or_dir] [...]\n\npytest.py: error: no such option: --override-ini\n"
    assert diagnose(optparse).fix == "classic_style_off"      # pytest 2.3 says it in optparse's words


def test_a_build_is_diagnosed_by_its_failing_step_not_by_errors_the_builder_recovered_from() -> None:
    from issuebench.setup.runner import last_step

    # requests 2.3 (2014): an old sdist fails under today's setuptools, the builder rebuilds it with
    # the era's tools and goes on; the step that then fails is the era's pip.
    log = ("$ uv pip install invoke==0.2.0\nerror: Failed to build `pexpect-u==2.5.1`\n"
           "         error in pexpect-u setup command: use_2to3 is invalid.\n"
           "# builds: pexpect-u built with the environment's own build tools\n"
           "$ uv pip install --build-constraint c.txt invoke==0.2.0\n + invoke==0.2.0\n"
           "$ (sandbox, network=True) python -m pip install --no-deps --no-build-isolation -e .\n\n"
           "Usage:\n  python -m pip install [options] <requirement specifier> ...\n\n"
           "no such option: --no-build-isolation\n")
    assert diagnose(log).fix == "older_setuptools"
    step = last_step(log)
    assert step.startswith("$ (sandbox") and "use_2to3" not in step
    assert diagnose(step).fix == "legacy_develop"


def test_a_pytest_older_than_its_pytest_script_is_run_as_a_module() -> None:
    ctx = RuleContext(tree=None, facts=Facts())  # type: ignore[arg-type]
    log = "bash: line 1: pytest: command not found\n"
    fix = apply_rule(diagnose(log), _plan(["six"], test_cmd="pytest -rA"), ctx)
    assert fix is not None and fix.plan.spec.packages == ["six", "pytest"]
    # requests 2.3 pins pytest 2.3.4, whose script is `py.test`
    fix = apply_rule(diagnose(log), _plan(["pytest==2.3.4"], test_cmd="pytest -rA"), ctx)
    assert fix is not None and fix.plan.spec.test_cmd == "python -m pytest -rA"


def test_a_pytest_whose_optparse_refuses_continue_on_collection_errors_runs_again_without_it(
        tmp_path: Path) -> None:
    from issuebench.models import TestStatus
    from issuebench.setup.judging import KEEP_GOING as _KEEP_GOING
    from issuebench.setup.judging import judge as _judge
    from issuebench.setup.runner import Run

    class Recorder:
        commands: list[str] = []

        def test(self, built: object, plan: Plan, command: str, what: str, *, per_file: bool = False) -> Run:
            self.commands.append(command)
            if _KEEP_GOING in command:     # pytest 2.3's words
                return Run("test", log=f"pytest.py: error: no such option:{_KEEP_GOING}\n")
            return Run("test", log="t.py::test_a PASSED\n", statuses={"t.py::test_a": TestStatus.PASSED})

    init_repo(tmp_path, {"t.py": "def test_a():\n    pass\n"})
    runner = Recorder()
    run = _judge(runner, None, _plan(["pytest==2.3.4"], test_cmd="python -m pytest -rA"),  # type: ignore[arg-type]
                 "python -m pytest -rA" + _KEEP_GOING, "whole suite", SourceTree.open(tmp_path))
    assert run.passed == 1
    assert runner.commands == [f"python -m pytest -rA{_KEEP_GOING} -v", "python -m pytest -rA -v"]


def test_an_old_pytest_that_cannot_rewrite_asserts_runs_with_plain_asserts() -> None:
    log = ("collecting ... collected 0 items / 1 errors\n"
           "______________________ ERROR collecting test_requests.py _______________________\n"
           "env/lib/python3.6/site-packages/_pytest/assertion/rewrite.py:206: in _rewrite_test\n"
           ">       rewrite_asserts(tree)\n"
           "env/lib/python3.6/site-packages/_pytest/assertion/rewrite.py:434: in generic_visit\n")
    plan = _plan(["pytest==2.3.4"], test_cmd="python -m pytest -rA")
    fix = apply_rule(diagnose(log), plan, RuleContext(tree=None, facts=Facts()))  # type: ignore[arg-type]
    assert fix is not None and fix.plan.spec.test_cmd == "python -m pytest -rA --assert=plain"


def test_an_old_setup_py_goes_straight_to_develop_and_its_easy_install_fetches_are_installed_first(
        tmp_path: Path) -> None:
    from issuebench.setup.plan import DEVELOP_INSTALL, EDITABLE_INSTALL

    init_repo(tmp_path / "r", {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
                               "pkg/__init__.py": "", "tests/test_a.py": "def test_a():\n    pass\n"})
    tree = SourceTree.open(tmp_path / "r")
    facts = extract(tree)
    # pip 10 (April 2018) brought --no-build-isolation; an env dated before it has an older pip
    assert initial_plan(facts, tree, date="2017-12-07T00:00:00Z", pythons=["3.6"]).spec.install == [DEVELOP_INSTALL]
    assert initial_plan(facts, tree, date="2019-01-01T00:00:00Z", pythons=["3.7"]).spec.install == [EDITABLE_INSTALL]

    # astropy 1.3's setup.py computes setup_requires; easy_install cannot fetch them in the sandbox
    log = ("$ (sandbox, network=True) python setup.py develop --no-deps\n"
           "Download error on https://example.invalid/simple/jinja2/: [Errno -2] Name or service not known\n"
           "No local packages or working download links found for jinja2>=2.7\n"
           "distutils.errors.DistutilsError: Could not find suitable distribution for "
           "Requirement.parse('jinja2>=2.7')\n")
    plan = _plan(["pytest"], install=[DEVELOP_INSTALL])
    fix = apply_rule(diagnose(log), plan, RuleContext(tree=tree, facts=facts))
    assert fix is not None and fix.plan.spec.packages == ["pytest", "jinja2>=2.7"]


def test_ids_pytest_cannot_find_are_left_out_of_a_second_run(tmp_path: Path) -> None:
    import shlex
    import sys

    from issuebench.setup.sample import without_unfound_ids

    (tmp_path / "test_a.py").write_text("import pytest\n\n@pytest.mark.parametrize('x', [1, 2])\n"
                                        "def test_p(x):\n    pass\n")
    ids = ["test_a.py::test_p[1]", "test_a.py::test_p[None-fill]", "test_a.py::test_p[2]"]
    command = " ".join([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                        *(shlex.quote(i) for i in ids)])
    first = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "no tests ran" in first.stdout          # one id it cannot find, and it runs nothing
    again = without_unfound_ids(command, first.stdout + first.stderr)
    assert again is not None and "None-fill" not in again
    assert "test_a.py::test_p[1]" not in again    # this pytest names the test, not which case
    (tmp_path / "test_b.py").write_text("def test_b():\n    pass\n")
    second = subprocess.run(again + " test_b.py", shell=True, cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert "1 passed" in second.stdout
    assert without_unfound_ids(again, second.stdout) is None
    # pytest 3.3 (astropy 1.3) names the whole id: only that one goes
    old_log = "ERROR: not found: /tmp/testbed/test_a.py::test_p[None-fill]\n(no name ... in any of [<Module>])\n"
    assert without_unfound_ids(command, old_log) == " ".join(
        shlex.quote(a) for a in shlex.split(command) if a != "test_a.py::test_p[None-fill]")


def test_a_failure_on_a_file_the_clone_lacks_is_blamed_on_the_clone() -> None:
    import time

    from issuebench.setup.loop import Attempt, _result
    from issuebench.setup.runner import Run

    class Clone:      # a fetched snapshot that left out one large file
        commit = "b16c7d12"

        def missing_files(self) -> list[str]:
            return ["astropy/utils/iers/data/eopc04.1962-now"]

    error = ("INTERNALERROR> urllib.error.URLError: <urlopen error Unable to open any source! Exceptions were "
             "{'http://data.example/data/eopc04.1962-now': URLError(gaierror(-3, 'Temporary failure in name "
             "resolution'))}>")
    attempt = Attempt(1, "extracted", "3.11", "test", error_kind="needs_network", error=error)
    result = _result("astropy/astropy", Clone(), None, [attempt], (Run("test"), _plan(["pytest"]), ""), 0.95,  # type: ignore[arg-type]
                     None, time.monotonic())
    assert result.reason.startswith("the clone lacks astropy/utils/iers/data/eopc04.1962-now")
    # the attempt's excerpt may stop before the name: the best run's whole log tells
    cut = Attempt(1, "extracted", "3.11", "test", error_kind="needs_network", error=error[:60])
    result = _result("astropy/astropy", Clone(), None, [cut], (Run("test", log=error), _plan(["pytest"]), ""), 0.95,  # type: ignore[arg-type]
                     None, time.monotonic())
    assert result.reason.startswith("the clone lacks")


@pytest.mark.network
def test_the_first_python_is_one_whose_bounded_packages_have_wheels_at_the_date() -> None:
    # pint 0.25: numpy>=1.23,<2.0.0 has no wheel for 3.13, whose environment compiled numpy from
    # source until the stage ran out of time; 3.12 has wheels of every package.
    from issuebench.setup.wheel_python import with_wheel_python

    plan = Plan(spec=EnvSpec(python="3.13", packages=["numpy>=1.23,<2.0.0", "pytest"],
                             exclude_newer="2025-08-01T00:00:00Z"), runner="pytest", pythons=["3.13", "3.12", "3.11"])
    chosen = with_wheel_python(plan)
    assert chosen.spec.python == "3.12"
    assert "3.13 has no wheel of some package" in chosen.spec.notes[-1]
    # Unbounded packages are not looked at; a package that is only an sdist keeps the order.
    assert with_wheel_python(plan.copy(packages=["numpy", "pytest"])).spec.python == "3.13"
    assert with_wheel_python(plan.copy(packages=["docopt==0.6.2"])).spec.python == "3.13"
    # A package that never had a wheel (docopt) is left to its sdist: the others still decide.
    assert with_wheel_python(plan.copy(packages=["numpy>=1.23,<2.0.0", "docopt==0.6.2"])).spec.python == "3.12"


def test_a_project_without_setup_py_that_old_pip_cannot_install_editable_is_built_with_its_source_first(
        tmp_path: Path) -> None:
    from issuebench.setup.plan import BUILT_INSTALL, EDITABLE_INSTALL

    # git-changelog in 2019: a poetry backend, no setup.py, and the era's pip 19.3
    init_repo(tmp_path / "r", {"pyproject.toml": "[build-system]\nrequires = ['poetry>=0.12']\n"
                                                 "build-backend = 'poetry.masonry.api'\n",
                               "src/pkg/__init__.py": "", "tests/test_a.py": "def test_a():\n    pass\n"})
    tree = SourceTree.open(tmp_path / "r")
    facts = extract(tree)
    log = ("$ (sandbox, network=True) python -m pip install --no-deps --no-build-isolation -e .\n"
           'ERROR: File "setup.py" not found. Directory cannot be installed in editable mode: /tmp/testbed\n'
           '(A "pyproject.toml" file was found, but editable mode currently requires a setup.py based build.)\n')
    fix = apply_rule(diagnose(log), _plan(["poetry>=0.12", "pytest"], install=[EDITABLE_INSTALL]),
                     RuleContext(tree=tree, facts=facts))
    assert fix is not None and fix.plan.spec.install == [BUILT_INSTALL]
    # the patched source, not the built copy, is what the tests import
    assert fix.plan.spec.env_vars["PYTHONPATH"] == "/tmp/testbed:/tmp/testbed/src"


def test_a_share_just_under_the_threshold_is_not_printed_as_the_threshold() -> None:
    from issuebench.models import TestStatus
    from issuebench.setup.judging import refusal
    from issuebench.setup.runner import Run

    statuses = {f"t.py::test_{i}": TestStatus.PASSED for i in range(1899)}
    statuses |= {f"t.py::test_f{i}": TestStatus.FAILED for i in range(101)}
    reason = refusal(Run("test", statuses=statuses), 0.95)
    assert reason is not None and reason.startswith("94.95% of the judged tests passed (needs 95%)")


def test_an_id_of_a_module_that_fails_to_collect_gives_way_to_the_module(tmp_path: Path) -> None:
    """pytest stops the whole run at such an id, --continue-on-collection-errors or not."""
    import shlex
    import sys

    from issuebench.setup.sample import without_unfound_ids

    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    (tmp_path / "test_broken.py").write_text("raise RuntimeError('settings are not configured')\n\n"
                                             "def test_x():\n    pass\n\ndef test_y():\n    pass\n")
    ids = ["test_a.py::test_a", "test_broken.py::test_x", "test_broken.py::test_y"]
    command = " ".join([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "-p", "no:warnings",
                        "--continue-on-collection-errors", *(shlex.quote(i) for i in ids)])
    first = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "1 passed" not in first.stdout                 # the one good test never ran
    again = without_unfound_ids(command, first.stdout + first.stderr)
    assert again is not None and again.endswith("test_a.py::test_a test_broken.py")
    assert again.count("-p") == 2                          # repeated options stay as they were
    second = subprocess.run(again, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "1 passed, 1 error" in second.stdout           # the module's failure still counts, once


def test_a_judging_run_stopped_at_an_id_of_a_broken_module_runs_again_with_the_module(tmp_path: Path) -> None:
    from issuebench.models import TestStatus
    from issuebench.setup.judging import judge as _judge
    from issuebench.setup.runner import Run

    class Recorder:
        commands: list[str] = []

        def test(self, built: object, plan: Plan, command: str, what: str, *, per_file: bool = False) -> Run:
            self.commands.append(command)
            if "::test_x" in command:
                # stderr's line inside stdout's, as the sandbox's log holds them
                return Run("test", log="collecting ... ERROR: found no collectors for /tmp/testbed/t_broken.py::test_x\n"
                                       "ERROR t_broken.py - ImproperlyConfigured\n",
                           statuses={"t_broken.py": TestStatus.ERROR})
            return Run("test", log="t.py::test_a PASSED\n",
                       statuses={"t.py::test_a": TestStatus.PASSED, "t_broken.py": TestStatus.ERROR})

    init_repo(tmp_path, {"t.py": "def test_a():\n    pass\n", "t_broken.py": "def test_x():\n    pass\n"})
    runner = Recorder()
    run = _judge(runner, None, _plan(["pytest"]), "pytest -rA t.py::test_a t_broken.py::test_x",  # type: ignore[arg-type]
                 "sample", SourceTree.open(tmp_path))
    assert runner.commands[-1] == "pytest -rA t.py::test_a t_broken.py -v"
    assert run.passed == 1 and run.import_failed == ["t_broken.py"]


def test_sample_never_names_a_file_the_suites_own_command_ignores(tmp_path: Path) -> None:
    """pytest runs a file named on its command line even under `--ignore`: zarr's command ignores
    its benchmarks (they fill 4 GiB), and a sample naming one was killed for memory, 0 read."""
    from issuebench.setup.sample import plan_samples, suite_files

    files = {f"tests/test_{i:03}.py": "def test():\n    pass\n" for i in range(70)}
    files |= {f"tests/benchmarks/test_big_{i}.py": "def test():\n    pass\n" for i in range(10)}
    files |= {f"tests/slow/test_slow_{i}.py": "def test():\n    pass\n" for i in range(5)}
    init_repo(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
                         "tox.ini": "[testenv]\ncommands = pytest --ignore tests/benchmarks "
                                    "--ignore-glob=tests/slow/*.py {posargs}\n", **files})
    tree = SourceTree.open(tmp_path)
    facts = extract(tree)
    plan = initial_plan(facts, tree, date=None, pythons=PYTHONS)
    assert "--ignore" in plan.test_args
    found = suite_files(plan, facts, tree)
    assert len(found) == 70 and not any("benchmarks" in f or "slow" in f for f in found)
    samples = plan_samples(plan, facts, tree)
    assert samples is not None and not any("benchmarks" in f for s in samples for f in s.files)


def test_one_requirement_named_twice_keeps_the_extras_of_both() -> None:
    """universal_pathlib depends on `fsspec >=2024.5.0` and its dev extra on
    `fsspec[smb,s3] >=2024.5.0`: keeping the first alone lost smbprotocol, and its conftest's
    import of fsspec's smb module failed the whole suite."""
    from issuebench.setup.requirements import merge

    merged = merge(["fsspec >=2024.5.0", "pytest"], ["fsspec[smb,s3] >=2024.5.0", "pytest[testing]", "pytest"])
    assert merged == ["fsspec[s3,smb]>=2024.5.0", "pytest[testing]"]
    assert merge(["fsspec"], ["fsspec[smb]>=2024"]) == ["fsspec[smb]>=2024"]


def test_a_nox_sessions_argument_with_a_space_stays_one_argument(tmp_path: Path) -> None:
    """universal_pathlib's `session.run("pytest", "-m", "not hdfs", ...)` read back as
    `-m not` (and a path `hdfs`): pytest then refused the marker expression, 0 tests."""
    noxfile = ('import nox\n\n@nox.session\ndef tests(session):\n    session.install(".[tests]")\n'
               '    session.run("pytest", "-m", "not hdfs", "--cov", *session.posargs)\n')
    init_repo(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "noxfile.py": noxfile,
                         "tests/test_a.py": "def test():\n    pass\n"})
    tree = SourceTree.open(tmp_path)
    facts = extract(tree)
    plan = initial_plan(facts, tree, date=None, pythons=PYTHONS)
    assert "-m 'not hdfs'" in plan.suite_command, plan.suite_command
