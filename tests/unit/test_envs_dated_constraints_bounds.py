"""The constraints for a project's own install hold what the recipe's packages step installed:
its bounds as well as its exact pins (astropy-8707: `pytest<7.2` came back as pytest 7.4)."""

from __future__ import annotations

from pathlib import Path

from issuebench.envs import dated_constraints as dc
from issuebench.envs.build_log import BuildLog
from issuebench.models import EnvSpec


def test_the_recipes_bounds_and_pins_are_in_the_resolution_of_the_projects_requirements(tmp_path: Path,
                                                                                       monkeypatch) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    spec = EnvSpec(python="3.9", exclude_newer="2020-10-05T00:00:00Z",
                   packages=["numpy==1.25.2", "pytest<7.2", "astropy-helpers", "'pytest-xdist>=3'"])
    site = dc.InstallSite(spec, venv, tmp_path, None, [], {}, BuildLog(tmp_path / "build.log"),
                          network=True, timeout=60)
    asked: list[list[str]] = []
    monkeypatch.setattr(dc, "_declared", lambda site, extras: ["pytest-astropy>=0.2", "numpy"])
    monkeypatch.setattr(dc, "_resolve", lambda site, dated, reqs: asked.append(reqs) or "pytest==7.1.3\n")
    assert dc.dated_constraints(site, None, ["."], None) == venv / dc.DATED_CONSTRAINTS
    assert asked[0] == ["pytest-astropy>=0.2", "numpy", "numpy==1.25.2", "pytest<7.2", "pytest-xdist>=3"]


def test_when_the_recipes_entries_contradict_the_project_the_packages_they_bound_are_left_unconstrained(
        tmp_path: Path, monkeypatch) -> None:
    """Resolved without the recipe's entries, the packages they name must not be constrained to the
    date's release: `pytest<7.2` installed by the packages step would come back as pytest 7.4."""
    venv = tmp_path / "venv"
    venv.mkdir()
    spec = EnvSpec(python="3.9", exclude_newer="2020-10-05T00:00:00Z",
                   packages=["Jinja2==3.0.3", "pytest<7.2", "not a requirement <1"])
    site = dc.InstallSite(spec, venv, tmp_path, None, [], {}, BuildLog(tmp_path / "build.log"),
                          network=True, timeout=60)
    monkeypatch.setattr(dc, "_declared", lambda site, extras: ["Jinja2<3.0", "pytest"])
    answers = {False: None, True: "jinja2==2.11.2\npytest==7.4.0\nsix==1.15.0\n"}
    monkeypatch.setattr(dc, "_resolve", lambda site, dated, reqs: answers[reqs == ["Jinja2<3.0", "pytest"]])
    written = dc.dated_constraints(site, None, ["."], None)
    assert written is not None
    lines = written.read_text().splitlines()
    assert "six==1.15.0" in lines
    assert not [line for line in lines if line.lower().startswith(("pytest", "jinja2"))]


def test_a_pin_the_projects_build_requires_exclude_is_left_out_of_the_constraints(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    """PIP_CONSTRAINT reaches the isolated build too: the date's cython 0.29.28 beside a build that
    requires cython==0.29.22 made every build of the project impossible to resolve."""
    venv = tmp_path / "venv"
    venv.mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools", "cython==0.29.22", "numpy>=1.17,<1.26", "extension-helpers"]\n')
    spec = EnvSpec(python="3.9", exclude_newer="2022-03-31T00:00:00Z", packages=["cython", "numpy==1.25.2"])
    log = BuildLog(tmp_path / "build.log")
    site = dc.InstallSite(spec, venv, tmp_path, None, [], {}, log, network=True, timeout=60)
    monkeypatch.setattr(dc, "_declared", lambda site, extras: ["numpy>=1.18", "pyerfa>=2.0"])
    monkeypatch.setattr(dc, "_resolve", lambda site, dated, reqs:
                        "cython==0.29.28\nnumpy==1.25.2\npyerfa==2.0.0.3\nextension-helpers==1.0.0\n")
    written = dc.dated_constraints(site, None, ["."], None)
    assert written is not None
    lines = written.read_text().splitlines()
    assert "cython==0.29.28" not in lines  # excluded by the build's cython==0.29.22
    assert {"numpy==1.25.2", "pyerfa==2.0.0.3", "extension-helpers==1.0.0"} <= set(lines)  # admitted: kept
    assert any("cython==0.29.28" in note for note in log.notes)
