"""Rules turn a diagnosis into a new plan, and stop when they have nothing new to offer."""

from __future__ import annotations

from pathlib import Path

import pytest

from issuebench.config import TESTBED_PATH
from issuebench.models import EnvSpec
from issuebench.setup.diagnose import diagnose
from issuebench.setup.extract import Facts
from issuebench.setup.plan import Plan
from issuebench.setup.rules import RuleContext, apply_rule
from issuebench.setup.source import SourceTree

PYTHONS = ["3.12", "3.11", "3.10", "3.9"]


@pytest.fixture
def ctx(tmp_path: Path) -> RuleContext:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "helper.py").write_text("")
    return RuleContext(tree=SourceTree.open(tmp_path), facts=Facts(name="mypkg", has_setup_py=True))


def _plan(**spec: object) -> Plan:
    return Plan(spec=EnvSpec(**{"python": "3.12", "packages": ["pytest"], **spec}), runner="pytest",
                pythons=PYTHONS)


def test_missing_imports_install_their_distributions(ctx: RuleContext) -> None:
    log = "E ModuleNotFoundError: No module named 'yaml'\nE ModuleNotFoundError: No module named 'six'\n"
    fix = apply_rule(diagnose(log), _plan(), ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "PyYAML", "six"]
    assert fix.description == "missing import: add PyYAML, six"
    ctx.tried.add(fix.description)
    assert apply_rule(diagnose(log), _plan(), ctx) is None          # the same fix is never re-applied


def test_missing_local_module_sets_pythonpath(ctx: RuleContext) -> None:
    fix = apply_rule(diagnose("ModuleNotFoundError: No module named 'mypkg.sub'"), _plan(), ctx)
    assert fix is not None and fix.plan.spec.env_vars["PYTHONPATH"] == f"{TESTBED_PATH}:{TESTBED_PATH}/src"
    assert fix.plan.spec.packages == ["pytest"]


def test_removed_module_moves_to_the_newest_python_that_has_it(ctx: RuleContext) -> None:
    fix = apply_rule(diagnose("ModuleNotFoundError: No module named 'imp'"), _plan(), ctx)
    assert fix is not None and fix.plan.spec.python == "3.11"
    fix = apply_rule(diagnose("ImportError: cannot import name 'Mapping' from 'collections'"), _plan(), ctx)
    assert fix.plan.spec.python == "3.9"
    ctx.pythons_tried.add("3.9")
    assert apply_rule(diagnose("ImportError: cannot import name 'Mapping' from 'collections'"), _plan(), ctx) is None


def test_old_build_code_steps_setuptools_down(ctx: RuleContext) -> None:
    diagnosis = diagnose("error in foo setup command: use_2to3 is invalid.")
    fix = apply_rule(diagnosis, _plan(packages=["setuptools", "pytest"]), ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "setuptools<58"]
    again = apply_rule(diagnosis, fix.plan, ctx)
    assert again is not None and "setuptools<50" in again.plan.spec.packages


def test_unknown_pytest_option_installs_plugin_then_drops_addopts(ctx: RuleContext) -> None:
    fix = apply_rule(diagnose("pytest: error: unrecognized arguments: --cov=pkg"), _plan(), ctx)
    assert fix is not None and "pytest-cov" in fix.plan.spec.packages
    fix = apply_rule(diagnose("pytest: error: unrecognized arguments: --flake8"), _plan(), ctx)
    assert fix is not None and fix.plan.spec.test_cmd == 'pytest -rA -o addopts=""'


def test_resolution_failure_relaxes_pins_then_changes_python(ctx: RuleContext) -> None:
    diagnosis = diagnose("No solution found when resolving dependencies")
    plan = _plan(packages=["pytest==3.0.7", "six>=1.0,<1.5; python_version<'4'", "setuptools<58"])
    fix = apply_rule(diagnosis, plan, ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "six; python_version<'4'", "setuptools<58"]
    fix = apply_rule(diagnosis, fix.plan, ctx)
    assert fix is not None and fix.plan.spec.python == "3.11"


def test_no_tests_ran_drops_paths_then_switches_runner(ctx: RuleContext) -> None:
    diagnosis = diagnose("collected 0 items\nno tests ran in 0.1s")
    plan = _plan()
    plan.test_args = ["tests"]
    fix = apply_rule(diagnosis, plan, ctx)
    assert fix is not None and fix.plan.test_args == []
    fix = apply_rule(diagnosis, fix.plan, ctx)
    assert fix is not None and fix.plan.runner == "unittest" and fix.plan.spec.log_parser == "unittest"


def test_markers_are_evaluated_for_the_target_python() -> None:
    from issuebench.setup.requirements import evaluate_markers

    reqs = ["six", "importlib_metadata; python_version<'3.8'", 'tomli; python_version < "3.11"',
            'pywin32; sys_platform == "win32"', "odd; not a marker"]
    assert evaluate_markers(reqs, "3.7") == ["six", "importlib_metadata", "tomli", "odd; not a marker"]
    assert evaluate_markers(reqs, "3.12") == ["six", "odd; not a marker"]
    plan = _plan(python="3.12", packages=reqs[:3])
    assert plan.built_spec().packages == ["six"] and plan.spec.packages == reqs[:3]   # the plan keeps markers


def test_a_wheel_only_package_with_no_wheel_is_dropped_alone(ctx: RuleContext) -> None:
    # django-import-export's tests extra pins mysqlclient (built from wheels only: it needs the
    # MySQL client's headers) beside chardet, pytz and django-extensions, which its tests import.
    log = ("error: No solution found when resolving dependencies\n  cause: Because mysqlclient==2.2.8 has no usable "
           "wheels and you require mysqlclient==2.2.8, we can conclude that your requirements are unsatisfiable.\n")
    plan = _plan(packages=["pytest", "mysqlclient==2.2.8", "chardet==7.3.0", "pytz==2026.1"])
    fix = apply_rule(diagnose(log), plan, ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "chardet==7.3.0", "pytz==2026.1"]
    # A conflict among pins still drops every exact test-only pin at once (sympy 1.9's CI jobs).
    conflict = log.replace("mysqlclient==2.2.8 has no usable wheels and you require", "you require")
    fix = apply_rule(diagnose(conflict), plan, ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest"]


def test_a_wheel_less_package_uv_names_in_a_longer_explanation_is_dropped(ctx: RuleContext) -> None:
    # iceberg-python's CI installs every extra; hive-kerberos brings kerberos, an sdist only. uv
    # says it over two sentences, the second starting "And because you require".
    log = ("error: No solution found when resolving dependencies\n  cause: Because kerberos==1.3.1 has no usable "
           "wheels and only kerberos<=1.3.1 is available, we can conclude that kerberos>=1.3.1 cannot be used.\n"
           "         And because you require kerberos>=1.3.1, we can conclude that your requirements are "
           "unsatisfiable.\n")
    plan = _plan(packages=["pytest", "kerberos>=1.3.1", "thrift>=0.13.0", "pyarrow>=18.0.0"])
    fix = apply_rule(diagnose(log), plan, ctx)
    assert fix is not None and fix.plan.spec.packages == ["pytest", "thrift>=0.13.0", "pyarrow>=18.0.0"], fix.reason
