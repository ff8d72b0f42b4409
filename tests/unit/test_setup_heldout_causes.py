"""Causes the held-out corpus showed: a suite whose helpers are top-level modules of its test folder
(a Python 2 era `from tools import chdir` in test/__init__.py); requirements files kept for one old
Python."""

from __future__ import annotations

from pathlib import Path

from issuebench.models import EnvSpec
from issuebench.setup.diagnose import diagnose
from issuebench.setup.extract import Facts, extract
from issuebench.setup.plan import Plan, initial_plan
from issuebench.setup.requirements import evaluate_markers
from issuebench.setup.rules import RuleContext, apply_rule
from issuebench.setup.source import SourceTree
from tests.gitrepo import init_repo

# The first attempt's log on bottle 0.11 (pytest 3.0.5, Python 3.6), cut to its first error.
HELPER_IMPORT_LOG = """\
collecting ... collected 0 items / 24 errors

==================================== ERRORS ====================================
______________________ ERROR collecting test/test_app.py _______________________
ImportError while importing test module '/tmp/testbed/test/test_app.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
test/__init__.py:3: in <module>
    from tools import chdir
E   ModuleNotFoundError: No module named 'tools'
"""


def _plan(**spec: object) -> Plan:
    return Plan(spec=EnvSpec(python="3.6", packages=["pytest"], **spec), runner="pytest",
                pythons=["3.6"])


def _helper_repo(path: Path) -> SourceTree:
    init_repo(path, {
        "setup.py": "from setuptools import setup\nsetup(name='web', py_modules=['web'])\n",
        "web.py": "VALUE = 1\n",
        "test/__init__.py": "from tools import chdir\n",
        "test/tools.py": "def chdir(path):\n    return path\n",
        "test/test_app.py": "import web\n\ndef test_app():\n    assert web.VALUE == 1\n"})
    return SourceTree.open(path)


def test_a_missing_import_the_test_folder_holds_goes_on_pythonpath_not_installed(tmp_path: Path) -> None:
    ctx = RuleContext(tree=_helper_repo(tmp_path), facts=Facts(name="web", has_setup_py=True))
    fix = apply_rule(diagnose(HELPER_IMPORT_LOG), _plan(), ctx)
    assert fix is not None
    assert fix.plan.spec.packages == ["pytest"]          # no registry's 'tools' distribution
    assert fix.plan.spec.env_vars["PYTHONPATH"].split(":") == ["/tmp/testbed", "/tmp/testbed/test"]


def test_the_test_folder_is_added_to_a_pythonpath_already_set(tmp_path: Path) -> None:
    ctx = RuleContext(tree=_helper_repo(tmp_path), facts=Facts(name="web", has_setup_py=True))
    plan = _plan(env_vars={"PYTHONPATH": "/tmp/testbed"})
    fix = apply_rule(diagnose(HELPER_IMPORT_LOG), plan, ctx)
    assert fix is not None
    assert fix.plan.spec.env_vars["PYTHONPATH"] == "/tmp/testbed:/tmp/testbed/test"
    again = apply_rule(diagnose(HELPER_IMPORT_LOG), fix.plan, ctx)
    assert again is None                                 # nothing new to try: the next rule's turn


def test_a_module_no_folder_holds_is_still_installed(tmp_path: Path) -> None:
    ctx = RuleContext(tree=_helper_repo(tmp_path), facts=Facts(name="web", has_setup_py=True))
    log = HELPER_IMPORT_LOG.replace("'tools'", "'yaml'")
    fix = apply_rule(diagnose(log), _plan(), ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "PyYAML"]


def test_a_missing_import_the_project_declares_is_installed_though_a_folder_has_its_name(tmp_path: Path) -> None:
    # dry-python/returns keeps its hypothesis plugin in returns/contrib/hypothesis/ and declares
    # hypothesis in an extra: PYTHONPATH=returns/contrib made `import hypothesis` that folder, and
    # every later attempt collected nothing.
    init_repo(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='returns')\n",
        "returns/__init__.py": "", "returns/contrib/hypothesis/__init__.py": "import hypothesis\n",
        "tests/test_laws.py": "import hypothesis\n\ndef test_law():\n    pass\n"})
    log = HELPER_IMPORT_LOG.replace("'tools'", "'hypothesis'")
    facts = Facts(name="returns", has_setup_py=True, extras={"check-laws": ["pytest", "hypothesis"]})
    fix = apply_rule(diagnose(log), _plan(), RuleContext(tree=SourceTree.open(tmp_path), facts=facts))
    assert fix is not None and fix.plan.spec.packages == ["pytest", "hypothesis"]
    assert "PYTHONPATH" not in fix.plan.spec.env_vars
    # Undeclared, and with no project name to tell its own package by, the folder is taken.
    undeclared = apply_rule(diagnose(log), _plan(), RuleContext(tree=SourceTree.open(tmp_path),
                                                                facts=Facts(has_setup_py=True)))
    assert undeclared is not None and "PYTHONPATH" in undeclared.plan.spec.env_vars


def test_requirements_kept_for_one_old_python_do_not_pin_the_suite(tmp_path: Path) -> None:
    # dateutil 2.8's requirements/3.3/requirements-dev.txt pins pytest<3.3 and setuptools<40 for
    # Python 3.3 alone; read as the suite's needs they gave a 2022 commit pytest 3.2 and a
    # setuptools that no longer imports on 3.9 and later.
    init_repo(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
        "requirements-dev.txt": "pytest >= 3.0\nhypothesis >= 3.30\n",
        "requirements/3.3/requirements-dev.txt": "setuptools<40.0\npytest<3.3\nfreezegun<0.3.11\n",
        "tox.ini": "[tox]\nenvlist = py33, py311\n[testenv]\ndeps = -rrequirements-dev.txt\n"
                   "commands = pytest\n[testenv:py33]\ndeps = -rrequirements/3.3/requirements-dev.txt\n",
        "tests/test_a.py": "def test_a():\n    pass\n"})
    tree = SourceTree.open(tmp_path)
    plan = initial_plan(extract(tree), tree, date=None, pythons=["3.11"])
    on_311 = evaluate_markers(plan.spec.packages, "3.11")
    assert "pytest<3.3" not in on_311 and "freezegun<0.3.11" not in on_311
    assert not any(p.startswith("setuptools<") for p in on_311)
    assert "pytest >= 3.0" in on_311 and "hypothesis >= 3.30" in on_311
    assert "pytest<3.3" in evaluate_markers(plan.spec.packages, "3.3")   # still there for 3.3


EXTENSION_FROM_CYTHON = """\
from setuptools import Extension, setup

setup(name='flist', packages=['flist'],
      ext_modules=[Extension('flist._flist', ['flist/_flist.c'])])
"""


def test_a_c_source_the_tree_holds_only_as_cython_is_generated_before_the_install(tmp_path: Path) -> None:
    # frozenlist 1.1 and 1.2: the .c comes from the Makefile's cython step, in the sdist alone.
    init_repo(tmp_path, {"setup.py": EXTENSION_FROM_CYTHON, "flist/__init__.py": "",
                         "flist/_flist.pyx": "def size():\n    return 1\n",
                         "tests/test_flist.py": "def test_size():\n    pass\n"})
    tree = SourceTree.open(tmp_path)
    plan = initial_plan(extract(tree), tree, date="2022-01-18", pythons=["3.10"])
    command = "python -m cython -3 -I flist -o flist/_flist.c flist/_flist.pyx"
    assert plan.spec.pre_install == [command]
    assert "cython" in plan.spec.packages
    assert plan.spec.pre_test[0] == f"{command} >/dev/null 2>&1 || true"   # a patched .pyx counts


def test_a_c_source_in_the_tree_or_a_setup_py_that_cythonizes_needs_no_step(tmp_path: Path) -> None:
    init_repo(tmp_path / "with_c", {"setup.py": EXTENSION_FROM_CYTHON, "flist/__init__.py": "",
                                    "flist/_flist.pyx": "", "flist/_flist.c": "/* made */\n"})
    cythonizing = EXTENSION_FROM_CYTHON.replace("from setuptools", "from Cython.Build import cythonize\n"
                                                "from setuptools")
    init_repo(tmp_path / "cythonizes", {"setup.py": cythonizing, "flist/__init__.py": "",
                                        "flist/_flist.pyx": ""})
    for name in ("with_c", "cythonizes"):
        tree = SourceTree.open(tmp_path / name)
        plan = initial_plan(extract(tree), tree, date="2022-01-18", pythons=["3.10"])
        assert plan.spec.pre_install == [] and "cython" not in plan.spec.packages, name


# The end of dateutil 2.8's judging log under pytest 3.2.5 (a sample of 200 ids, run -v): its
# verbose lines are `id PASSED`, which parser pytest does not read; its skips parsed.
OLD_PYTEST_TAIL = """\
src/dateutil/zoneinfo/__init__.py:26: UserWarning
========= 4 failed, 188 passed, 7 skipped, 1 xfailed in 16.06 seconds ==========
"""


def test_an_old_pytest_whose_passes_did_not_parse_runs_verbose_though_skips_did() -> None:
    from issuebench.models import TestStatus
    from issuebench.setup.judging import quiet_pytest
    from issuebench.setup.runner import Run

    plan = _plan(test_cmd="pytest -rA")
    skips = {f"tests/test_tz.py:{line}": TestStatus.SKIPPED for line in range(100, 107)}
    diagnosis = quiet_pytest(Run("test", log=OLD_PYTEST_TAIL, statuses=skips), plan)
    assert diagnosis is not None and diagnosis.fix == "verbose_pytest"
    passed = {**skips, "tests/test_tz.py::test_a": TestStatus.PASSED}
    assert quiet_pytest(Run("test", log=OLD_PYTEST_TAIL, statuses=passed), plan) is None


def _plan_with(path: Path, config: str, text: str) -> Plan:
    """The first plan of a one-test setup.py project with one pytest configuration file."""
    init_repo(path, {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", config: text,
                     "tests/test_a.py": "def test_a():\n    pass\n"})
    tree = SourceTree.open(path)
    return initial_plan(extract(tree), tree, date=None, pythons=["3.11"])


def test_a_coverage_threshold_in_the_configuration_turns_coverage_off_for_the_tests(tmp_path: Path) -> None:
    """arrow's tox.ini has `--cov-fail-under=99` in pytest's addopts: the whole suite meets it, a
    task's one test file never does, so every graded run exited 1 with its tests passing."""
    plan = _plan_with(tmp_path, "tox.ini",
                      "[testenv]\ncommands = pytest {posargs}\n[pytest]\naddopts = -v --cov=pkg --cov-fail-under=99\n")
    assert plan.spec.test_cmd == "pytest -rA --no-cov"
    assert any("coverage threshold in tox.ini" in note for note in plan.spec.notes)


def test_coverage_on_in_addopts_with_a_threshold_in_coverages_own_config_is_a_threshold_too(tmp_path: Path) -> None:
    from issuebench.setup.coverage_gate import coverage_threshold

    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
             "pyproject.toml": '[tool.pytest.ini_options]\naddopts = ["--cov=pkg"]\n',
             ".coveragerc": "[report]\nfail_under = 100\n"}
    init_repo(tmp_path / "gated", files)
    assert "fail_under" in (coverage_threshold(SourceTree.open(tmp_path / "gated")) or "")
    # Coverage on without a threshold, or a threshold coverage is never run with: nothing to turn off.
    init_repo(tmp_path / "plain", {**files, ".coveragerc": "[report]\nshow_missing = true\n"})
    assert coverage_threshold(SourceTree.open(tmp_path / "plain")) is None
    init_repo(tmp_path / "unused", {**files, "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-v'\n"})
    assert coverage_threshold(SourceTree.open(tmp_path / "unused")) is None
    plan = initial_plan(extract(SourceTree.open(tmp_path / "plain")), SourceTree.open(tmp_path / "plain"),
                        date=None, pythons=["3.11"])
    assert "--no-cov" not in plan.spec.test_cmd


def test_a_refusal_for_unimportable_modules_names_the_first_import_error() -> None:
    from issuebench.setup.judging import first_import_error

    assert first_import_error(HELPER_IMPORT_LOG) == "ModuleNotFoundError: No module named 'tools'"
    assert first_import_error("collected 3 items\n\ntests/test_a.py ...\n") is None
    # Over untrusted output it runs in linear time and stays one bounded line.
    hostile = "ImportError while importing test module\nE   Error" + "x" * 1_000_000
    assert len(first_import_error(hostile) or "") <= 170


def test_addopts_that_stop_at_the_first_failure_are_lifted_for_the_tests(tmp_path: Path) -> None:
    """transitions' pytest.ini has `addopts = -x -rf`: one unimportable module ended every run."""
    from issuebench.setup.exit_first import _stops

    plan = _plan_with(tmp_path, "pytest.ini", "[pytest]\naddopts = -x -rf\n")
    assert plan.spec.test_cmd == "pytest -rA --maxfail=0"
    assert any("pytest.ini's addopts (-x -rf) stop at the first failure" in note for note in plan.spec.notes)
    assert [w for w in ("-x", "-vx", "--exitfirst", "--maxfail=2", "-rxs", "-rf", "-v", "-kx") if _stops(w)] == [
        "-x", "-vx", "--exitfirst", "--maxfail=2"]


def test_a_module_that_failed_to_import_is_diagnosed_from_its_own_error_not_the_tail(tmp_path: Path) -> None:
    """pandera: a test module imports black, which setup drops as a formatter; its long log's tail
    held only the short summary, the name cut to the terminal's width (`'bl...`), so no signature
    matched and the search switched Pythons four times instead of installing black."""
    from issuebench.models import TestStatus
    from issuebench.setup.runner import Run
    from issuebench.setup.search import diagnose_run

    passed = [f"tests/core/test_schema.py::test_case_{n}" for n in range(700)]
    log = "\n".join([
        "==================================== ERRORS ====================================",
        "_______________ ERROR collecting tests/io/test_pandas_io.py ______________",
        "ImportError while importing test module '/testbed/tests/io/test_pandas_io.py'.",
        "Hint: make sure your test modules/packages have valid Python names.",
        "Traceback:", "tests/io/test_pandas_io.py:9: in <module>", "    import black",
        "E   ModuleNotFoundError: No module named 'black'",
        "=========================== short test summary info ============================",
        *(f"PASSED {t}" for t in passed),
        "ERROR tests/io/test_pandas_io.py - ModuleNotFoundError: No module named 'bl...",
    ])
    statuses = {**{t: TestStatus.PASSED for t in passed}, "tests/io/test_pandas_io.py": TestStatus.ERROR}
    run = Run(stage="test", log=log, statuses=statuses)
    plan = _plan()
    diagnosis = diagnose_run(run, plan)
    assert diagnosis is not None and diagnosis.kind == "missing_module"
    fix = apply_rule(diagnosis, plan, RuleContext(tree=SourceTree.open(tmp_path), facts=Facts(name="pandera")))
    assert fix is not None and "black" in fix.plan.spec.packages


def test_a_submodule_missing_from_a_folder_already_on_the_path_is_installed(tmp_path: Path) -> None:
    """authlib: tests/django/ (a test package) was taken for `import django` and tests/ put on
    PYTHONPATH; then `No module named 'django.test'`, and Django was never installed."""
    init_repo(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='authlib')\n", "authlib/__init__.py": "",
        "tests/__init__.py": "", "tests/django/__init__.py": "", "tests/django/settings.py": "",
        "tests/django/test_views.py": "from django.test import TestCase\n"})
    ctx = RuleContext(tree=SourceTree.open(tmp_path), facts=Facts(name="authlib", has_setup_py=True))
    first = apply_rule(diagnose(HELPER_IMPORT_LOG.replace("'tools'", "'django'")), _plan(), ctx)
    assert first is not None and "/tmp/testbed/tests" in first.plan.spec.env_vars["PYTHONPATH"].split(":")
    ctx.tried.add(first.description)
    then = apply_rule(diagnose(HELPER_IMPORT_LOG.replace("'tools'", "'django.test'")), first.plan, ctx)
    assert then is not None and "django" in then.plan.spec.packages
    # and tests/ comes off the path, where its django/ hid the installed Django
    assert "/tmp/testbed/tests" not in then.plan.spec.env_vars.get("PYTHONPATH", "").split(":")
    # Django installed by an earlier attempt, the folder still on the path: the path alone changes
    ctx.tried.add(then.description)
    installed = first.plan.copy(packages=[*first.plan.spec.packages, "django"])
    last = apply_rule(diagnose(HELPER_IMPORT_LOG.replace("'tools'", "'django.test'")), installed, ctx)
    assert last is not None and last.plan.spec.packages == installed.spec.packages
    assert "/tmp/testbed/tests" not in last.plan.spec.env_vars.get("PYTHONPATH", "").split(":")


def test_a_module_of_the_projects_own_package_is_never_put_on_the_path_as_a_top_level_one(tmp_path: Path) -> None:
    """authlib/integrations/django_oauth2/requests.py was taken for `import requests`: its folder
    on PYTHONPATH hid the installed requests (`cannot import name 'Session' from 'requests'`)."""
    init_repo(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='Authlib')\n", "authlib/__init__.py": "",
        "authlib/integrations/__init__.py": "", "authlib/integrations/django_oauth2/__init__.py": "",
        "authlib/integrations/django_oauth2/requests.py": "", "tests/test_client.py": "import requests\n"})
    ctx = RuleContext(tree=SourceTree.open(tmp_path), facts=Facts(name="Authlib", has_setup_py=True))
    fix = apply_rule(diagnose(HELPER_IMPORT_LOG.replace("'tools'", "'requests'")), _plan(), ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "requests"]
    assert "PYTHONPATH" not in fix.plan.spec.env_vars


def test_a_module_a_failing_test_imports_in_its_body_is_diagnosed_from_its_report(tmp_path: Path) -> None:
    """pandera's to_script imports black when called: its tests FAILED (no module failed to
    import), and the summary's cut name (`'bl...`) matched no signature."""
    from issuebench.models import TestStatus
    from issuebench.setup.runner import Run
    from issuebench.setup.search import diagnose_run

    passed = [f"tests/core/test_schema.py::test_case_{n}" for n in range(700)]
    report = ["_______________________________ test_to_script ________________________________",
              "    def _format_script(script):", "        try:", ">           import black",
              "E           ModuleNotFoundError: No module named 'black'",
              "pandera/io/common_io.py:363: ModuleNotFoundError"]
    log = "\n".join(["=================================== FAILURES ===================================", *report,
                     "=========================== short test summary info ============================",
                     *(f"PASSED {t}" for t in passed),
                     "FAILED tests/io/test_pandas_io.py::test_to_script - ModuleNotFoundError: No module nam..."])
    statuses = {**{t: TestStatus.PASSED for t in passed}, "tests/io/test_pandas_io.py::test_to_script": TestStatus.FAILED}
    diagnosis = diagnose_run(Run(stage="test", log=log, statuses=statuses), _plan())
    assert diagnosis is not None and diagnosis.kind == "missing_module" and diagnosis.found["module"] == ["black"]


def test_pytests_required_plugins_are_installed_then_pinned(tmp_path: Path) -> None:
    # hikari: `required_plugins` in its pytest configuration; pytest stops before collecting.
    ctx = RuleContext(tree=_helper_repo(tmp_path), facts=Facts(name="web", has_setup_py=True))
    log = "ERROR: Missing required plugins: pytest-asyncio>=0.23, pytest-cov\n"
    fix = apply_rule(diagnose(log), _plan(), ctx)
    assert fix is not None
    assert fix.plan.spec.packages == ["pytest", "pytest-asyncio>=0.23", "pytest-cov"]
    # Installed but older than asked: the version is pinned.
    installed = _plan().copy(packages=["pytest", "pytest-asyncio", "pytest-cov"])
    fix = apply_rule(diagnose(log), installed, ctx)
    assert fix is not None
    assert fix.plan.spec.packages == ["pytest", "pytest-cov", "pytest-asyncio>=0.23"]


def test_a_module_python_dash_m_cannot_find_is_installed(tmp_path: Path) -> None:
    # django-constance names Django only in tox's factor deps: `python -m django test` says so.
    ctx = RuleContext(tree=_helper_repo(tmp_path), facts=Facts(name="web", has_setup_py=True))
    fix = apply_rule(diagnose("/home/ib/envs/0db1f70a/bin/python: No module named django\n"), _plan(), ctx)
    assert fix is not None
    assert [r for r in fix.plan.spec.packages if r.lower() == "django"] != []


# app-model's Qt tests with no display: pytest-qt keeps Qt's own message out; Python's fatal-error
# report names the Qt modules loaded.
QT_ABORT_LOG = """\
tests/test_qt/test_qactions.py ....Fatal Python error: Aborted

Current thread 0x00007fdc33ec6c40 (most recent call first):
  File "/env/lib/python3.13/site-packages/_pytest/runner.py", line 245 in call_and_report

Extension modules: psygnal._signal, PyQt6.QtCore, PyQt6.QtGui, PyQt6.QtWidgets, PyQt6.QtTest (total: 5)
"""


def test_qt_aborting_for_want_of_a_display_runs_offscreen(tmp_path: Path) -> None:
    ctx = RuleContext(tree=_helper_repo(tmp_path), facts=Facts(name="web", has_setup_py=True))
    fix = apply_rule(diagnose(QT_ABORT_LOG), _plan(), ctx)
    assert fix is not None and fix.plan.spec.env_vars == {"QT_QPA_PLATFORM": "offscreen"}
    assert apply_rule(diagnose(QT_ABORT_LOG), fix.plan, ctx) is None     # once
    # Qt's own words, where they reach the log, say the same.
    assert diagnose("qt.qpa.xcb: could not connect to display \n").fix == "qt_offscreen"


def test_async_tests_with_no_plugin_to_run_them_install_pytest_asyncio(tmp_path: Path) -> None:
    ctx = RuleContext(tree=_helper_repo(tmp_path), facts=Facts(name="web", has_setup_py=True))
    log = ("FAILED tests/test_feature_flags.py::test_spans_async - Failed: async def functions are not natively "
           "supported.\nYou need to install a suitable plugin for your async framework, for example:\n")
    fix = apply_rule(diagnose(log), _plan(), ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "pytest-asyncio"]


def test_a_run_whose_every_test_skipped_under_a_marker_selection_runs_the_whole_suite(tmp_path: Path) -> None:
    """anndata: the only pytest command was its GPU job's `-m "array_api or gpu"`; all 200
    sampled tests skipped (no cupy, no jax), and the environment was refused for it."""
    log = "\n".join(["SKIPPED [38] tests/test_concatenate.py:1199: cupy not installed.",
                     "======================= 200 skipped, 1 warning in 2.09s ========================"])
    plan = Plan(spec=EnvSpec(python="3.12", packages=["pytest"]), runner="pytest", pythons=["3.12"],
                test_args=["-m", "array_api or gpu", "-n", "auto"])
    ctx = RuleContext(tree=SourceTree.open(tmp_path), facts=Facts(name="anndata"))
    fix = apply_rule(diagnose(log), plan, ctx)
    assert fix is not None and fix.plan.test_args == ["-n", "auto"]
    # A run with a test that passed is no such run; nor is one without a marker selection.
    assert diagnose(log.replace("= 200 skipped", "= 3 passed, 200 skipped")) is None
    assert apply_rule(diagnose(log), plan.copy(test_args=["tests"]), ctx) is None


def test_a_nox_install_calls_keyword_arguments_and_inner_calls_are_no_packages(tmp_path: Path) -> None:
    """scikit-build-core's noxfile installs with `env={"PYTHONWARNINGS": "error"}`: `PYTHONWARNINGS`
    and `error` were taken for packages, and two attempts went to dropping them."""
    noxfile = ('import nox\n\n@nox.session\ndef tests(session):\n'
               '    session.install(".", "pytest-mock", "--config-settings=build.verbose=true",\n'
               '                    env={"PYTHONWARNINGS": "error"}, silent=False)\n'
               '    session.install(*reqs, "pytest")\n'
               '    session.install("-e.", *nox.project.dependency_groups(pyproject, "docs"), "hypothesis")\n')
    init_repo(tmp_path, {"pkg/__init__.py": "", "noxfile.py": noxfile})
    facts = extract(SourceTree.open(tmp_path))
    assert {"pytest-mock", "pytest", "hypothesis"} <= set(facts.test_requires)
    # cibuildwheel's `dependency_groups(pyproject, "test")`: `test` and `docs` were taken for packages.
    assert not {"PYTHONWARNINGS", "error", "False", "docs", "pyproject"} & set(facts.test_requires)
