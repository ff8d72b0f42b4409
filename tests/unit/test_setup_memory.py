from pathlib import Path

from issuebench.models import EnvSpec
from issuebench.setup.memory import RecipeMemory, default_path


def test_nearest_recipe_of_the_same_repo_first(tmp_path: Path) -> None:
    memory = RecipeMemory(tmp_path / "m.sqlite")
    for date, python in (("2019-01-01", "3.6"), ("2021-01-01", "3.8"), ("2023-01-01", "3.10")):
        memory.save("o/r", f"c{date}", date, EnvSpec(python=python), "pytest", ["tests"], 10, 10)
    memory.save("o/other", "x", "2021-02-01", EnvSpec(python="3.9"), "pytest", [], 1, 1)
    found = RecipeMemory(tmp_path / "m.sqlite").nearest("o/r", "2021-03-01T00:00:00Z", limit=2)
    assert [f.spec.python for f in found] == ["3.8", "3.10"]
    assert found[0].test_args == ["tests"] and found[0].commit == "c2021-01-01"
    assert memory.nearest("o/none", "2021-01-01") == []


def test_default_path_is_under_issuebench_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path))
    assert default_path() == tmp_path / "setup.sqlite"
