"""The README a new user reads first: every verb in its command table, its commands valid for the
command line as it is, and the set-up it does not hide (what `make test` installs with apt)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import typer.main

from issuebench.cli.main import app

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()


def test_every_verb_is_in_the_command_table():
    table = README.split("## Commands", 1)[1].split("\n\n", 2)[1]
    verbs = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    missing = sorted(v for v in verbs if f"`issuebench {v}" not in table and f"/ `{v}" not in table)
    assert missing == []


def code_lines(section: str) -> list[list[str]]:
    """The `issuebench ...` lines of the code blocks under a heading, as argv (comments cut)."""
    body = README.split(section, 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```\n(.*?)```", body, re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith("issuebench "):
                lines.append(shlex.split(line)[1:])
    return lines


def test_the_own_dataset_commands_parse_as_written():
    group = typer.main.get_command(app)
    lines = code_lines("## Your own dataset")
    assert [argv[0] for argv in lines] == ["collect", "validate", "eval", "audit"]
    for argv in lines:
        ctx = group.make_context("issuebench", list(argv))
        command = group.get_command(ctx, argv[0])  # type: ignore[attr-defined]
        command.make_context(argv[0], argv[1:], parent=ctx)  # an unknown option or a bad value raises


def test_the_readme_says_what_make_test_installs_with_apt():
    script = (ROOT / "scripts" / "install-system.sh").read_text()
    assert "--test-tools" in (ROOT / "Makefile").read_text() and "need+=(chromium)" in script
    development = README.split("## Development", 1)[1]
    assert "Chromium" in development and "apt" in development


def test_the_readme_names_the_server_that_replays_the_demo():
    assert "issuebench serve demo:agent" in README
    assert "commit message" in README and "audit" in README.split("## Your own dataset", 1)[1]
