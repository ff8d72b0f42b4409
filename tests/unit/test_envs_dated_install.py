"""The era's pip is steered to dated releases: what the install installs, and what constrains it."""

import subprocess
import sys
from pathlib import Path

from issuebench.envs.dated_install import (
    SCRIPT,
    constraint_lines,
    local_install_targets,
    pep621_requirements,
    split_listing,
    wanted_extras,
)


def test_install_commands_that_install_the_local_project_are_recognised():
    assert local_install_targets(["python -m pip install -e .[test]"]) == [".[test]"]
    assert local_install_targets(["pip install -e '.[dev,test]' && echo ok"]) == [".[dev,test]"]
    assert local_install_targets(["python setup.py develop"]) == ["."]
    assert local_install_targets(["pip install numpy", "sed -i s/a/b/ setup.py"]) is None
    assert wanted_extras([".[dev, Test]", "."]) == ["dev", "test"]


def test_static_project_tables_are_read_without_running_anything(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["attrs>=19"]\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\ndocs = ["sphinx"]\n')
    assert pep621_requirements(tmp_path, ["test"]) == ["# project: p", "attrs>=19", "pytest"]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndynamic = ["dependencies"]\n')
    assert pep621_requirements(tmp_path, []) is None


def test_setup_py_requirements_are_read_with_their_extras_and_markers(tmp_path: Path):
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "setup(name='p', version='1.0.dev-20210306', install_requires=['docutils>=0.12'],\n"
        "      extras_require={'test': ['pytest'], 'docs': ['sphinx'],\n"
        "                      ':python_version<\"3.8\"': ['importlib_metadata']})\n")
    proc = subprocess.run([sys.executable, str(SCRIPT), "test"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "docutils>=0.12" in lines and "pytest" in lines and "sphinx" not in lines
    assert any(line.startswith("importlib_metadata ; python_version") for line in lines)
    assert subprocess.run([sys.executable, str(SCRIPT), ""], cwd=tmp_path / "..", capture_output=True).returncode == 3


def test_a_setup_py_without_requirements_still_names_its_project(tmp_path: Path):
    # elementpath 1.4: no install_requires; its test dependency xmlschema depends on elementpath, so
    # the dated resolution pins elementpath, and a constraint on the project itself makes pip refuse
    # `pip install -e .`. The name lets the constraints leave it out.
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='elem-path', version='1.4.3')\n")
    proc = subprocess.run([sys.executable, str(SCRIPT), ""], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    requirements, project = split_listing(proc.stdout.splitlines())
    assert requirements == [] and project is not None
    assert constraint_lines("elem-path==1.4.3\nxmlschema==1.1.2\n", [], exclude=project) == ["xmlschema==1.1.2"]


def test_the_setup_py_reader_leaves_no_temporary_folder_behind(tmp_path: Path):
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='p', version='1.0')\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(scratch)}
    assert subprocess.run([sys.executable, str(SCRIPT), ""], cwd=tmp_path, env=env).returncode == 0
    assert list(scratch.iterdir()) == []


def test_constraints_keep_versions_only_and_let_the_build_tools_win():
    compiled = "docutils==0.16\n    # via p\nsetuptools==69.0.0\n-e file:///tmp/testbed\nfoo @ https://x/foo.zip\n"
    assert constraint_lines(compiled, ["setuptools==58.2.0"]) == ["docutils==0.16", "setuptools==58.2.0"]


def test_an_extra_naming_the_project_itself_brings_its_extras(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "Pkg"\ndependencies = ["attrs"]\n'
        '[project.optional-dependencies]\nstats = ["scipy"]\nall = ["pkg[stats]", "numpy"]\n')
    assert pep621_requirements(tmp_path, ["all"]) == ["# project: pkg", "attrs", "numpy", "scipy"]
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "setup(name='pvlib', version='0.10', install_requires=['numpy'],\n"
        "      extras_require={'optional': ['scipy'], 'all': ['pvlib[optional]', 'pytest']})\n")
    proc = subprocess.run([sys.executable, str(SCRIPT), "all"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.stdout.splitlines() == ["# project: pvlib", "numpy", "pytest", "scipy"]


def test_a_direct_dependency_held_years_behind_the_date_gets_a_floor(monkeypatch):
    from issuebench.envs import dated_install

    times = {"numba": {"0.53.1": "2021-03-25T00:00:00Z", "0.56.3": "2022-10-13T00:00:00Z",
                       "0.58.0": "2023-09-20T00:00:00Z", "0.58.1": "2023-10-17T00:00:00Z"},
             "numpy": {"1.26.0": "2023-09-16T00:00:00Z"}}
    monkeypatch.setattr("issuebench.index.release_dates.upload_times", lambda name: times.get(name, {}))
    compiled = "numba==0.53.1\nnumpy==1.26.0\nllvmlite==0.36.0\n"
    assert dated_install.held_back(compiled, ["numba", "numpy>=1.16"], "2023-10-03T14:31:47Z") == ["numba>=0.56.3"]
    # A release of the date's own year is no sign of anything.
    assert dated_install.held_back("numba==0.58.0\n", ["numba"], "2023-10-03T14:31:47Z") == []


def test_a_dependency_the_project_pins_or_caps_is_never_given_a_floor(monkeypatch):
    from issuebench.envs import dated_install

    times = {"docutils": {"0.15.2": "2019-07-30T00:00:00Z", "0.20": "2023-05-04T00:00:00Z"}}
    monkeypatch.setattr("issuebench.index.release_dates.upload_times", lambda name: times.get(name, {}))
    assert dated_install.held_back("docutils==0.15.2\n", ["docutils==0.15.2"], "2023-10-03T14:31:47Z") == []
    assert dated_install.held_back("docutils==0.15.2\n", ["docutils<0.16"], "2023-10-03T14:31:47Z") == []
    assert dated_install.held_back("docutils==0.15.2\n", ["docutils"], "2023-10-03T14:31:47Z") == ["docutils>=0.20"]
