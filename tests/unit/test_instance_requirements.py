"""Which of a commit's declared requirements the shared environment does not satisfy."""

from __future__ import annotations

from issuebench.envs.instance_requirements import Layer, unmet

INSTALLED = ["pluggy==0.13.1", "py==1.11.0", "attrs==23.1.0", "more-itertools==10.1.0", "mypkg==0.1"]


def test_missing_and_out_of_range_requirements_are_unmet():
    declared = ["wcwidth", "pluggy>=0.12,<1.0", "py>=1.5.0", "attrs<19"]
    assert unmet(declared, INSTALLED, "3.9.18", "mypkg") == ["wcwidth", "attrs<19"]


def test_markers_are_evaluated_for_the_environments_interpreter():
    declared = ['importlib-metadata>=0.12; python_version < "3.8"', 'colorama; sys_platform == "win32"',
                'toml; python_version >= "3.6"']
    assert unmet(declared, INSTALLED, "3.9.18", None) == ['toml; python_version >= "3.6"']
    assert unmet(declared, INSTALLED, "3.7.9", None) == ['importlib-metadata>=0.12; python_version < "3.8"',
                                                         'toml; python_version >= "3.6"']


def test_the_project_itself_urls_names_and_unreadable_lines_are_never_unmet():
    declared = ["MyPkg", "other @ https://example.invalid/other.tar.gz", "running egg_info", "More_Itertools>=4"]
    assert unmet(declared, INSTALLED, "3.9.18", "mypkg") == []


def test_a_layer_goes_first_on_the_import_path_and_its_scripts_on_path(tmp_path):
    (tmp_path / "bin").mkdir()
    env = Layer(tmp_path, ["wcwidth"]).apply({"PATH": "/venv/bin:/usr/bin", "PYTHONPATH": "/extra"})
    assert env["PYTHONPATH"] == f"{tmp_path}:/extra"
    assert env["PATH"] == f"{tmp_path / 'bin'}:/venv/bin:/usr/bin"
