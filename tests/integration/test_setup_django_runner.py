"""A Django project whose own tests run under Django's runner (`python -m django test`, the
settings module named in tox's setenv), not pytest: collect sets it up, validate keeps the task,
gold resolves it. Real git, real uv environment (Django from the registry), the real sandbox.

Under pytest (what setup ran before it read Django's runner) every test module fails to import:
Django's settings are not configured.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from issuebench.setup.pyversions import installed_minors
from tests.factory_run import run_factory
from tests.unit.test_collect_mining import Repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

PYPROJECT = """[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "acme-shop"
version = "1.0"
requires-python = ">=3.10"
dependencies = ["django>=4.2"]

[tool.setuptools]
packages = ["shop"]
"""
TOX = """[tox]
envlist = py{310,311}-django

[testenv]
setenv =
    DJANGO_SETTINGS_MODULE = tests.settings
deps = coverage
commands = python -m coverage run -m django test -v2 {posargs:tests}
"""
SETTINGS = ("SECRET_KEY = 'not-secret'\nINSTALLED_APPS = []\n"
            "DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}}\n"
            "USE_TZ = True\n")
CORE = "def add(a, b):\n    return a - b\n"
TESTS = ("from django.conf import settings\nfrom django.test import SimpleTestCase\n\nfrom shop.calc import add\n\n\n"
         "class CalcTests(SimpleTestCase):\n    def test_zero(self):\n        assert settings.SECRET_KEY\n"
         "        self.assertEqual(add(0, 0), 0)\n")
FIX_TEST = "\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
DATE = "2024-06-03T12:00:00Z"


@pytest.fixture(autouse=True)
def _needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from issuebench.sandbox import get_sandbox

    try:
        get_sandbox()
    except Exception as exc:
        pytest.skip(f"no sandbox: {exc}")
    if not {"3.10", "3.11", "3.12"} & set(installed_minors()):
        pytest.skip("needs Python 3.10 to 3.12")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))


def test_a_django_runner_project_is_set_up_validated_and_resolved_by_gold(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    repo = Repo(repos / "acme__shop")
    repo.commit("init", {"pyproject.toml": PYPROJECT, "tox.ini": TOX, "shop/__init__.py": "", "shop/calc.py": CORE,
                         "tests/__init__.py": "", "tests/settings.py": SETTINGS, "tests/test_calc.py": TESTS},
                date=DATE)
    repo.commit("Fix add (#1)", {"shop/calc.py": CORE.replace("a - b", "a + b"),
                                 "tests/test_calc.py": TESTS + FIX_TEST}, date=DATE)
    env, kept, status = run_factory(tmp_path, repos, "acme__shop", "acme__shop-1")
    assert env["test_cmd"].startswith("python -m django test")
    assert env["env_vars"]["DJANGO_SETTINGS_MODULE"] == "tests.settings"
    # Django's runner named the tests by dotted module (it takes no file paths).
    assert kept["FAIL_TO_PASS"] == ["test_add (tests.test_calc.CalcTests.test_add)"] or \
        kept["FAIL_TO_PASS"] == ["test_add (tests.test_calc.CalcTests)"]
    assert len(kept["PASS_TO_PASS"]) == 1 and "test_zero" in kept["PASS_TO_PASS"][0]
    assert status == "resolved"


MANAGE_TOX = """[testenv]
setenv = PYTHONPATH = {toxinidir}/tests
deps = coverage
commands = python -m coverage run ./tests/manage.py test core {posargs}
"""
MANAGE_PY = ("import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), os.path.pardir))\n\n"
             "if __name__ == '__main__':\n    os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'settings')\n"
             "    from django.core.management import execute_from_command_line\n\n"
             "    execute_from_command_line(sys.argv)\n")


def test_a_project_tested_through_its_manage_py_is_set_up_validated_and_resolved(tmp_path: Path) -> None:
    # django-import-export: tests/manage.py sets `settings`, a module of tests/, and the app under
    # test (`core`) is a package of tests/: both import only with tests/ first on the path.
    repos = tmp_path / "repos"
    repo = Repo(repos / "acme__shop")
    settings = SETTINGS.replace("INSTALLED_APPS = []", "INSTALLED_APPS = ['core']")
    repo.commit("init", {"pyproject.toml": PYPROJECT, "tox.ini": MANAGE_TOX, "shop/__init__.py": "",
                         "shop/calc.py": CORE, "tests/manage.py": MANAGE_PY, "tests/settings.py": settings,
                         "tests/core/__init__.py": "", "tests/core/tests/__init__.py": "",
                         "tests/core/tests/test_calc.py": TESTS}, date=DATE)
    repo.commit("Fix add (#1)", {"shop/calc.py": CORE.replace("a - b", "a + b"),
                                 "tests/core/tests/test_calc.py": TESTS + FIX_TEST}, date=DATE)
    env, kept, status = run_factory(tmp_path, repos, "acme__shop", "acme__shop-1")
    assert env["test_cmd"].startswith("python -m django test")
    assert env["env_vars"]["DJANGO_SETTINGS_MODULE"] == "settings"
    assert kept["FAIL_TO_PASS"] in (["test_add (core.tests.test_calc.CalcTests.test_add)"],
                                    ["test_add (core.tests.test_calc.CalcTests)"])
    assert status == "resolved"
