"""resolve_spec: row env > user recipes > packaged recipes; version keys and ranges; dates."""

from __future__ import annotations

import subprocess

import pytest

from issuebench.envs import resolve_spec
from issuebench.envs.recipes import packaged_recipes_dir, spec_from_recipe
from issuebench.errors import InputError, IssuebenchError
from issuebench.models import EnvSpec, Task

RECIPE = '''
repo = "acme/widgets"

[defaults]
test_cmd = "pytest -rA -q"
log_parser = "pytest"

[versions."1.0"]
python = "3.8"
packages = ["six==1.12.0"]

[versions.">=2.0,<3"]
python = "3.10"

[versions."*"]
python = "3.12"
exclude_newer_source = "none"
'''


def _task(**kw) -> Task:
    base = {"instance_id": "acme__widgets-1", "repo": "acme/widgets", "base_commit": "a" * 40,
            "created_at": "2021-05-13 14:13:38", "version": "1.0"}
    base.update(kw)
    return Task(**base)


@pytest.fixture
def recipes(tmp_path):
    d = tmp_path / "recipes"
    d.mkdir()
    (d / "acme__widgets.toml").write_text(RECIPE)
    return d


def test_exact_version_with_defaults_and_date(recipes):
    spec = resolve_spec(_task(), recipes)
    assert spec.python == "3.8" and spec.packages == ["six==1.12.0"]
    assert spec.test_cmd == "pytest -rA -q"
    assert spec.exclude_newer == "2021-05-13T14:13:38Z"


def test_version_range_then_star(recipes):
    assert resolve_spec(_task(version="2.4"), recipes).python == "3.10"
    star = resolve_spec(_task(version="7.1"), recipes)
    assert star.python == "3.12" and star.exclude_newer is None


def test_row_env_wins_over_recipes(recipes):
    row = _task(env=EnvSpec(python="3.9", install=["pip install -e ."]))
    spec = resolve_spec(row, recipes)
    assert spec.python == "3.9" and spec.exclude_newer == "2021-05-13T14:13:38Z"


def test_user_recipe_wins_over_packaged(tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "pallets__flask.toml").write_text('repo = "pallets/flask"\n[versions."2.0"]\npython = "3.13"\n')
    task = _task(repo="pallets/flask", instance_id="pallets__flask-1", version="2.0")
    assert resolve_spec(task, d).python == "3.13"
    assert resolve_spec(task).python == "3.9"   # the packaged recipe


def test_unknown_repo_says_what_to_do(recipes):
    with pytest.raises(IssuebenchError) as exc:
        resolve_spec(_task(repo="nobody/nothing"), recipes)
    text = str(exc.value)
    assert "nobody/nothing" in text and "--recipes" in text and "issuebench setup" in text


def test_unknown_version_lists_known_ones(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    (d / "acme__widgets.toml").write_text('repo = "acme/widgets"\n[versions."1.0"]\npython = "3.8"\n')
    with pytest.raises(IssuebenchError) as exc:
        resolve_spec(_task(version="9.9"), d)
    assert "'9.9'" in str(exc.value) and "1.0" in str(exc.value)


def test_bad_field_points_at_file_and_key(tmp_path):
    bad = tmp_path / "acme__widgets.toml"
    bad.write_text('[versions."1.0"]\npyton = "3.8"\n')
    with pytest.raises(InputError) as exc:
        spec_from_recipe(bad, "1.0")
    assert "acme__widgets.toml" in str(exc.value) and "versions.1.0" in str(exc.value) and "pyton" in str(exc.value)


def test_environment_setup_commit_date_from_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_COMMITTER_DATE": "2019-03-04T05:06:07+00:00", "GIT_AUTHOR_DATE": "2019-03-04T05:06:07+00:00",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x"], check=True, env=env)
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    task = _task(env=EnvSpec(exclude_newer_source="environment_setup_commit"), environment_setup_commit=sha)
    assert resolve_spec(task, repo_dir=repo).exclude_newer == "2019-03-04T05:06:07Z"
    # Without the repository: created_at, and a note that says so.
    fallback = resolve_spec(task)
    assert fallback.exclude_newer == "2021-05-13T14:13:38Z"
    assert any("environment_setup_commit" in n for n in fallback.notes)


def test_every_packaged_recipe_loads():
    files = [p for p in packaged_recipes_dir().glob("*.toml") if not p.name.startswith("_")]
    assert files, "no packaged recipes"
    for path in files:
        import tomllib

        # A recipe of [defaults] alone (most non-Python ones) serves every version.
        versions = tomllib.loads(path.read_text()).get("versions") or [None]
        for version in versions:
            assert isinstance(spec_from_recipe(path, version), EnvSpec)


def test_a_recipe_of_defaults_alone_serves_every_version(tmp_path):
    from issuebench.envs.recipes import spec_from_recipe

    path = tmp_path / "o__r.toml"
    path.write_text('repo = "o/r"\n\n[defaults]\npython = "3.9"\nexclude_newer_exempt = ["pytest"]\n')
    for version in ("0.1", "2.4", None):
        spec = spec_from_recipe(path, version)
        assert spec is not None and spec.python == "3.9" and spec.exclude_newer_exempt == ["pytest"]
