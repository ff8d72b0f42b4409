"""System packages a recipe needs: found missing, named with the command that installs them."""

import shutil
from pathlib import Path

import pytest

from issuebench.envs import EnvBuilder, EnvBuildError, system_deps
from issuebench.models import EnvSpec


def test_recipes_name_their_system_packages(tmp_path: Path):
    (tmp_path / "o__r.toml").write_text('repo = "o/r"\n[defaults]\nsystem_packages = ["libfoo0"]\n'
                                        '[versions."1.0"]\nsystem_packages = ["libbar1", "libfoo0"]\n')
    (tmp_path / "_corrections.toml").write_text("")
    assert system_deps.recipe_packages(tmp_path) == {"o/r": ["libfoo0", "libbar1"]}
    from issuebench.envs import packaged_recipes_dir

    assert "libeccodes0" in system_deps.recipe_packages(packaged_recipes_dir())["pydata/xarray"]


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian-like system")
def test_missing_packages_stop_the_build_with_the_command_to_run(tmp_path: Path):
    assert system_deps.missing_packages(["libc6", "issuebench-no-such-package"]) == ["issuebench-no-such-package"]
    import sys

    spec = EnvSpec(python=f"{sys.version_info[0]}.{sys.version_info[1]}", system_packages=["issuebench-no-such-package"])
    with pytest.raises(EnvBuildError) as info:
        EnvBuilder(cache_dir=tmp_path / "envs").ensure(spec, tmp_path)
    assert "issuebench-no-such-package" in info.value.message
    assert "issuebench envs system-deps" in (info.value.hint or "")
    assert not list((tmp_path / "envs").glob("*.failed.json"))   # installing it fixes it, no --rebuild
