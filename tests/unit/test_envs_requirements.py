"""Requirement files as the builder reads them, and the dating rules around exact pins."""

from pathlib import Path

from issuebench.envs.build_tools import build_constraints
from issuebench.envs.dating import date_args, filtered_by_cutoff
from issuebench.envs.requirements import direct_reference_name, requirement_file_pins, usable_requirements
from issuebench.index.release_dates import version_of


def test_direct_references_name_their_distribution():
    # flask 2.0's requirements/dev.txt
    assert direct_reference_name("git+https://github.com/sphinx-doc/sphinx.git@96dbe5e3") == "sphinx"
    assert direct_reference_name("-e git+https://host/x/y.git@abc#egg=pallets-sphinx-themes") == \
        "pallets-sphinx-themes"
    assert direct_reference_name("attrs @ git+https://host/python-attrs/attrs@main") == "attrs"
    assert direct_reference_name("requests==2.0") is None
    assert direct_reference_name("-r other.txt") is None


def test_requirement_files_lose_what_cannot_be_fetched_and_say_so(tmp_path: Path):
    reqs = tmp_path / "requirements"
    reqs.mkdir()
    (reqs / "docs.txt").write_text("git+https://github.com/sphinx-doc/sphinx.git@96dbe5e3\nJinja2==3.0.1\n")
    (reqs / "dev.txt").write_text("-r docs.txt\n-e .\npytest>=6 ; python_version >= '3.6'\n"
                                  "foo @ git+https://host/o/foo@v1 ; python_version < '4'\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    notes: list[str] = []
    out = usable_requirements(reqs / "dev.txt", notes.append, scratch)
    lines = out.read_text().splitlines()
    assert "-e ." not in lines and "foo; python_version < '4'" in lines
    nested = Path(lines[0].split()[1]).read_text().splitlines()
    assert nested == ["sphinx", "Jinja2==3.0.1"]
    assert sum("substituted" in n for n in notes) == 2
    assert requirement_file_pins(reqs / "dev.txt") == [("Jinja2", "3.0.1")]


def test_the_projects_own_build_requirements_beat_the_envs_setuptools(tmp_path: Path):
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.9" / "site-packages"
    (site / "setuptools-65.6.3.dist-info").mkdir(parents=True)
    (site / "wheel-0.38.4.dist-info").mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    # pylint 2.15's pyproject.toml
    (ws / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools~=62.6", "wheel~=0.37.1"]\n')
    path = build_constraints(venv, [], ws)
    assert path is None  # both tools fall outside the project's ranges
    (ws / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=40", "wheel"]\n')
    path = build_constraints(venv, [], ws)
    assert path is not None and path.read_text().split() == ["setuptools==65.6.3", "wheel==0.38.4"]


def test_the_resolvers_hidden_packages_are_read_from_its_hints():
    out = ("hint: `exceptiongroup` was filtered by `exclude-newer` to only include packages uploaded "
           "before 2021-10-04T00:00:00Z.\nhint: `tomli` was filtered by `exclude-newer` to ...\n")
    assert filtered_by_cutoff(out) == ["exceptiongroup", "tomli"]
    assert date_args("2021-10-04T00:00:00Z", {"pytest": "2100-01-01T00:00:00Z"}) == [
        "--exclude-newer", "2021-10-04T00:00:00Z", "--exclude-newer-package", "pytest=2100-01-01T00:00:00Z"]
    assert date_args(None, {"pytest": "x"}) == []


def test_versions_are_read_from_distribution_file_names():
    assert version_of("pytest-7.4.0-py3-none-any.whl", "pytest") == "7.4.0"
    assert version_of("types_pkg_resources-0.1.3.tar.gz", "types-pkg-resources") == "0.1.3"
    assert version_of("zope.interface-5.0.tar.gz", "zope-interface") == "5.0"
    assert version_of("notes.txt", "x") is None


def test_a_release_that_cannot_be_built_is_named_from_the_resolver_output():
    from issuebench.envs.dating import failed_builds

    out = ("error: Failed to download and build `bottleneck==1.3.2`\n  cause: Failed to install requirements\n"
           "  cause: Failed to build `numpy==1.17.3`\n")
    assert failed_builds(out) == ["bottleneck"]
    assert failed_builds("error: No solution found") == []


def test_conda_only_packages_are_left_out_of_translated_environment_files(tmp_path: Path):
    from issuebench.envs.dating import not_on_index
    from issuebench.envs.requirements import drop_from_conda_files

    assert not_on_index("cause: Because cdms2 was not found in the package registry and you require") == ["cdms2"]
    conda = tmp_path / "0-environment.yml.txt"
    conda.write_text("numpy\ncdms2>=3\nscipy\n")
    pip_file = tmp_path / "1-requirements.txt.txt"
    pip_file.write_text("cdms2\n")
    assert drop_from_conda_files(["uv", "-r", str(conda), "-r", str(pip_file)], ["cdms2"])
    assert conda.read_text().split() == ["numpy", "scipy"]
    assert pip_file.read_text() == "cdms2\n"   # a pip file's requirement is the project's own word
    assert not drop_from_conda_files(["-r", str(conda)], ["cdms2"])


def test_a_requirement_whose_releases_are_all_yanked_is_pinned_to_the_newest():
    from issuebench.envs.dating import only_yanked

    out = ("  cause: Because types-pkg-resources<=0.1.2 was yanked (reason: Use types-setuptools instead)\n"
           "         And because types-pkg-resources==0.1.3 was yanked (reason: Use types-setuptools instead)"
           " and you require types-pkg-resources, we can conclude that your requirements are unsatisfiable.\n")
    assert only_yanked(out) == "types-pkg-resources==0.1.3"
    assert only_yanked("error: No solution found") is None


def test_an_unsatisfiable_requirement_is_named_from_the_resolver_output():
    from issuebench.envs.dating import unsatisfiable_requirements

    out = "And because you require h5py<3.dev0, we can conclude that your requirements are unsatisfiable."
    assert unsatisfiable_requirements(out) == ["h5py"]
    assert unsatisfiable_requirements("you require h5py<3") == []   # not a conclusion


def test_wheels_are_matched_to_the_interpreter():
    from issuebench.index.release_dates import _wheel_fits

    assert _wheel_fits("numpy-1.22.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "cp310")
    assert _wheel_fits("x-1-cp37-abi3-manylinux1_x86_64.whl", "cp310")
    assert _wheel_fits("x-1-py2.py3-none-any.whl", "cp310")
    assert not _wheel_fits("x-1-cp311-cp311-win_amd64.whl", "cp310")
    assert not _wheel_fits("numpy-1.17.3-cp38-cp38-manylinux1_x86_64.whl", "cp310")


def test_old_sdists_build_with_the_envs_own_tools_raised_to_what_legacy_builds_need(tmp_path):
    from issuebench.envs.build_tools import legacy_build_constraints

    site = tmp_path / "venv" / "lib" / "python3.6" / "site-packages"
    for dist in ("setuptools-40.4.3.dist-info", "wheel-0.32.0.dist-info"):
        (site / dist).mkdir(parents=True)
    path = legacy_build_constraints(tmp_path / "venv")
    # 2018's setuptools still has `Feature` (markupsafe 1.0's setup.py imports it; gone since 46),
    # and uv's builds of projects without [build-system] need at least 40.8.0.
    assert path is not None and path.read_text().split() == ["setuptools==40.8.0", "wheel==0.32.0"]
    (site / "setuptools-40.4.3.dist-info").rename(site / "setuptools-44.1.1.dist-info")
    assert legacy_build_constraints(tmp_path / "venv").read_text().split() == ["setuptools==44.1.1", "wheel==0.32.0"]
    assert legacy_build_constraints(tmp_path / "empty") is None
