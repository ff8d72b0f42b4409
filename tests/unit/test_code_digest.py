"""Result keys and environment hashes follow the code that decides them, not a number bumped by hand."""

from __future__ import annotations

import shutil
from pathlib import Path

from issuebench import code_digest
from issuebench.models import EnvSpec


def package_copy(tmp_path: Path) -> Path:
    root = tmp_path / "issuebench"
    shutil.copytree(code_digest.ROOT / "parsers", root / "parsers")
    shutil.copytree(code_digest.ROOT / "envs", root / "envs")
    return root


def digest(root: Path, part: str) -> str:
    code_digest.digest_of.cache_clear()
    return code_digest.digest_of((part,), root)


def test_a_changed_parser_changes_the_verdict_digest_and_its_prose_does_not(tmp_path: Path) -> None:
    root = package_copy(tmp_path)
    before = digest(root, "parsers")
    parser = root / "parsers" / "pytest_family.py"
    text = parser.read_text()
    parser.write_text(text.replace('"""pytest `-rA` short-summary parsers', '"""Reworded: pytest `-rA` parsers', 1)
                      + "\n# a comment changes nothing either\n")
    assert digest(root, "parsers") == before
    parser.write_text(text.replace("if len(tokens) < 2", "if len(tokens) < 3", 1))
    assert digest(root, "parsers") != before


def test_a_new_data_file_of_a_deciding_package_counts(tmp_path: Path) -> None:
    root = package_copy(tmp_path)
    before = digest(root, "parsers")
    (root / "parsers" / "extra.toml").write_text("[rule]\nx = 1\n")
    assert digest(root, "parsers") != before


def test_recipes_are_left_to_the_spec_hash(tmp_path: Path) -> None:
    root = package_copy(tmp_path)
    before = digest(root, "envs")
    (root / "envs" / "recipes" / "new.toml").parent.mkdir(exist_ok=True)
    (root / "envs" / "recipes" / "new.toml").write_text("x = 1\n")
    assert digest(root, "envs") == before


def test_the_env_hash_carries_the_env_build_code(monkeypatch) -> None:
    spec = EnvSpec(python="3.11", packages=["pytest"])
    before = spec.env_hash()
    monkeypatch.setattr("issuebench.models.env_build_code", lambda: "another-builder")
    assert spec.env_hash() != before
