"""`issuebench setup` reports bad input as one line with a hint, and writes recipes TOML or JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.setup.recipe_io import dumps_toml, write_recipe

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_missing_source_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["setup", str(tmp_path / "nope")])
    assert result.exit_code == 2
    text = " ".join(result.output.split())        # the console wraps long lines
    assert "nope: not a folder" in text and "hint:" in text and "Traceback" not in text


def test_unknown_commit_names_the_clone(tmp_path: Path) -> None:
    from tests.gitrepo import init_repo

    init_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    result = CliRunner().invoke(app, ["setup", str(tmp_path / "r"), "--commit", "deadbeef"])
    assert result.exit_code == 2 and "commit 'deadbeef' not found" in " ".join(result.output.split())


def test_recipe_round_trips_through_toml_and_json(tmp_path: Path) -> None:
    doc = {"repo": "o/r", "accepted": True, "tests_run": 3, "failing_tests": ["t::a \"q\""],
           "env": {"python": "3.9", "packages": ["six>=1"], "env_vars": {"A.B": "1"}},
           "attempts": [{"iteration": 1, "spec": {"python": "3.9"}}, {"iteration": 2, "fix": None}]}
    write_recipe(tmp_path / "r.toml", doc)
    write_recipe(tmp_path / "r.json", doc)
    loaded = tomllib.loads((tmp_path / "r.toml").read_text())
    expected = json.loads(json.dumps(doc))
    expected["attempts"][1].pop("fix")          # TOML has no null: absent
    assert loaded == expected
    assert json.loads((tmp_path / "r.json").read_text()) == doc
    assert dumps_toml({"a": []}) == "a = []\n"


def test_the_table_says_which_tests_were_left_out_for_what_the_machine_lacks(capsys) -> None:
    # An environment accepted at 213/349 reads as a contradiction unless the table says what the
    # judgement left out and how to install what the tests start.
    from issuebench.cli.setup_cmd import _print_text
    from issuebench.setup.loop import SetupResult

    said = "130 tests fail only because they start redis-server, which this machine lacks (...)"
    result = SetupResult(True, "o/r", "abc", None, None, "pytest", [], "pytest -rA", 349, 213, [], [], 1.0,
                         lacking_system=said)
    _print_text(result, None)
    out = " ".join(capsys.readouterr().out.split())
    assert f"{said}: not counted against the environment" in out
    assert result.summary()["lacking_system"] == said
