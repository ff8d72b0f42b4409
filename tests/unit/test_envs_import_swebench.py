"""The importer on a small stand-in for the reference's wheel, built here."""

from __future__ import annotations

import zipfile

from issuebench.envs.recipes import spec_from_recipe
from issuebench.envs.reference_recipes import import_swebench

CONSTANTS = '''
TEST_PYTEST = "pytest -rA"
TEST_DJANGO = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
SPECS_FLASK = {"2.0": {"python": "3.9", "packages": "requirements.txt", "install": "python -m pip install -e .",
                       "pip_packages": ["Werkzeug==2.3.7", "Jinja2==3.0.1"], "test_cmd": TEST_PYTEST}}
SPECS_DJANGO = {k: {"python": "3.5", "packages": "requirements.txt",
                    "pre_install": ["apt-get update && apt-get install -y locales", "locale-gen en_US.UTF-8"],
                    "install": "python setup.py install",
                    "eval_commands": ["export LANG=en_US.UTF-8", "export PYTHONIOENCODING=utf8"],
                    "test_cmd": TEST_DJANGO} for k in ["2.0", "2.1"]}
SPECS_SPHINX = {"3.5": {"python": "3.9", "pip_packages": ["tox==4.16.0"], "install": "python -m pip install -e .[test]",
                        "pre_install": ["sed -i 's/pytest/pytest -rA/' tox.ini",
                                        "sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py"],
                        "test_cmd": "tox --current-env -epy39 -v --"}}
SPECS_SYMPY = {"1.1": {"python": "3.9", "packages": "mpmath flake8", "install": "python -m pip install -e .",
                       "test_cmd": "bin/test -C --verbose"}}
MAP_REPO_VERSION_TO_SPECS_PY = {"pallets/flask": SPECS_FLASK, "django/django": SPECS_DJANGO,
                                "sphinx-doc/sphinx": SPECS_SPHINX, "sympy/sympy": SPECS_SYMPY,
                                "swe-bench/humaneval": {"1.0": {"python": "3.9"}}}
MAP_REPO_TO_REQS_PATHS = {"pallets/flask": ["requirements/dev.txt"], "django/django": ["tests/requirements/py3.txt"]}
MAP_REPO_TO_ENV_YML_PATHS = {}
'''
PARSERS = '''
MAP_REPO_TO_PARSER_PY = {
    "django/django": parse_log_django,
    "sympy/sympy": parse_log_sympy,
}
'''


def _wheel(tmp_path):
    path = tmp_path / "swebench-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("swebench/harness/constants/python.py", CONSTANTS)
        zf.writestr("swebench/harness/log_parsers/python.py", PARSERS)
        zf.writestr("swebench/__init__.py", "import docker  # heavy: must never be imported\n")
    return path


def test_import_translates_and_reports(tmp_path):
    out = tmp_path / "recipes"
    results = {r.repo: r for r in import_swebench(out, source=_wheel(tmp_path))}
    assert set(results) == {"pallets/flask", "django/django", "sphinx-doc/sphinx", "sympy/sympy"}
    assert results["django/django"].versions == ["2.0", "2.1"]

    flask = spec_from_recipe(out / "pallets__flask.toml", "2.0")
    assert "Werkzeug==2.0.0" in flask.packages and "Werkzeug==2.3.7" not in flask.packages
    assert any("Werkzeug 2.0.0" in n for n in flask.notes)
    assert flask.requirements_files == ["requirements/dev.txt"]
    assert flask.exclude_newer_source == "environment_setup_commit"

    django = spec_from_recipe(out / "django__django.toml", "2.1")
    assert django.test_directives == "django" and django.log_parser == "parse_log_django"
    assert django.install == ["python -m pip install -e ."]
    assert django.env_vars == {"LANG": "C.UTF-8", "PYTHONIOENCODING": "utf8"}
    assert django.pre_install == []
    assert any("apt-get" in u for u in results["django/django"].untranslated)
    assert any("not translated" in n and "apt-get" in n for n in django.notes)

    sphinx = spec_from_recipe(out / "sphinx-doc__sphinx.toml", "3.5")
    assert sphinx.test_cmd.startswith("pytest -rA")
    assert sphinx.pre_install == ["sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py"]

    sympy = spec_from_recipe(out / "sympy__sympy.toml", "1.1")
    assert sympy.packages == ["mpmath", "flake8"] and sympy.test_cmd == "bin/test -C --verbose"
    assert "swebench 9.9.9" in (out / "sympy__sympy.toml").read_text()


def test_a_correction_can_set_any_recipe_field():
    from issuebench.envs.reference_recipes import Corrections, translate_spec

    ref = {"python": "3.9", "test_cmd": "pytest -rA", "install": "python -m pip install -e ."}
    fix = {"repo": "pytest-dev/pytest", "versions": ["4.4"], "note": "old runner",
           "set": {"test_cmd": "pytest -rA -v -o console_output_style=classic", "log_parser": "parse_log_pytest_v2"}}
    tables = {"parsers": {}, "reqs_paths": {}, "env_yml_paths": {}}
    table, _ = translate_spec("pytest-dev/pytest", "4.4", ref, tables, Corrections([fix]))
    assert table["test_cmd"].endswith("console_output_style=classic")
    assert table["log_parser"] == "parse_log_pytest_v2"
    assert "correction: old runner" in table["notes"]
    other, _ = translate_spec("pytest-dev/pytest", "4.5", ref, tables, Corrections([fix]))
    assert other.get("log_parser") != "parse_log_pytest_v2"


def test_a_correction_can_add_packages_once():
    from issuebench.envs.reference_recipes import Corrections, translate_spec

    ref = {"python": "3.6", "packages": "numpy==1.16.0 cython==0.27.3", "install": "python -m pip install -e ."}
    fix = {"repo": "astropy/astropy", "versions": ["1.3"], "note": "helpers from the index",
           "add_packages": ["astropy-helpers", "cython==0.27.3"]}
    tables = {"parsers": {}, "reqs_paths": {}, "env_yml_paths": {}}
    table, _ = translate_spec("astropy/astropy", "1.3", ref, tables, Corrections([fix]))
    assert table["packages"] == ["numpy==1.16.0", "cython==0.27.3", "astropy-helpers"]
    assert "correction: helpers from the index" in table["notes"]


def test_the_packaged_recipes_carry_every_packaged_correction():
    # The packaged recipes are the importer's output kept as data; a correction added to the
    # corrections file must be in them too, or the fix it describes never reaches a run.
    from issuebench.envs.recipes import packaged_recipes_dir
    from issuebench.envs.reference_recipes import Corrections

    for fix in Corrections.load().items:
        path = packaged_recipes_dir() / (fix["repo"].replace("/", "__") + ".toml")
        for version in fix.get("versions", []):
            if version == "*":
                continue
            spec = spec_from_recipe(path, version)
            assert set(fix.get("add_packages", [])) <= set(spec.packages), (fix["repo"], version)
            assert any(fix["note"] in note for note in spec.notes), (fix["repo"], version)
            for key, value in fix.get("set", {}).items():
                assert getattr(spec, key) == value, (fix["repo"], version, key)
