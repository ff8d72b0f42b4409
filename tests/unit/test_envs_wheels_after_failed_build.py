"""Phase 5 of the dated constraints: a constrained package the install could not build from source
is taken as its first wheel for the interpreter, and only such a package."""

from __future__ import annotations

from pathlib import Path

from issuebench.envs import dated_constraints as dc
from issuebench.envs.build_log import BuildLog
from issuebench.envs.dated_install import DATED_CONSTRAINTS
from issuebench.envs.dating import pip_failed_builds
from issuebench.models import EnvSpec

# What pip 20.2 printed for astropy 3.1's `pip install -e .[test]` under Python 3.9 (shortened).
PIP_OUTPUT = """\
  Setting matplotlib==3.3.2 (from -c constraints.txt (line 17)) extras to: ()
    Building wheel for matplotlib (setup.py): started
  error: Failed to download FreeType. Please download one of [...]
  Building wheel for matplotlib (setup.py): finished with status 'error'
  ERROR: Failed building wheel for matplotlib
    Running setup.py install for matplotlib: finished with status 'error'
    Running setup.py install for astropy: finished with status 'error'
"""


def test_pips_failed_source_builds_are_named_once_each() -> None:
    assert pip_failed_builds(PIP_OUTPUT) == ["matplotlib", "astropy"]
    assert pip_failed_builds("Successfully installed matplotlib-3.3.2") == []


def _site(tmp_path: Path) -> dc.InstallSite:
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / DATED_CONSTRAINTS).write_text("matplotlib==3.3.2\nnumpy==1.19.2\n")
    spec = EnvSpec(python="3.9", exclude_newer="2020-10-05T00:00:00Z")
    return dc.InstallSite(spec, venv, tmp_path, None, [], {}, BuildLog(tmp_path / "build.log"),
                          network=True, timeout=60)


def test_a_constrained_package_that_did_not_build_is_taken_as_its_first_wheel(tmp_path, monkeypatch) -> None:
    site = _site(tmp_path)
    wheels = {"matplotlib": "2020-11-12T23:59:59Z", "astropy": "2021-01-01T23:59:59Z"}
    monkeypatch.setattr(dc, "first_wheel_date", lambda name, python, cutoff: wheels.get(name))
    seen = {}

    def rewrite(site, dated, targets, build):
        seen.update(site.log.cutoff_exceptions)
        return site.venv / DATED_CONSTRAINTS

    monkeypatch.setattr(dc, "dated_constraints", rewrite)
    assert dc.with_wheels(site, None, ["."], None, PIP_OUTPUT) == site.venv / DATED_CONSTRAINTS
    # The project (astropy) is not in the constraints: its own build failing is no cutoff's doing.
    assert seen == {"matplotlib": "2020-11-12T23:59:59Z"}
    assert any("first wheel" in note for note in site.log.notes)
    # A second failure of the same build changes nothing more: the install's failure stands.
    assert dc.with_wheels(site, None, ["."], None, PIP_OUTPUT) is None


def test_no_later_wheel_or_no_source_build_failure_leaves_the_failure_as_it_is(tmp_path, monkeypatch) -> None:
    site = _site(tmp_path)
    monkeypatch.setattr(dc, "first_wheel_date", lambda name, python, cutoff: None)
    monkeypatch.setattr(dc, "dated_constraints", lambda *a: (_ for _ in ()).throw(AssertionError("rewritten")))
    assert dc.with_wheels(site, None, ["."], None, PIP_OUTPUT) is None
    assert dc.with_wheels(site, None, ["."], None, "ERROR: No matching distribution found for foo") is None
    assert site.log.cutoff_exceptions == {}
