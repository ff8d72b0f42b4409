"""benchmarks/factory_corpus.py: a repository an earlier corpus ran is never counted as held out."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from issuebench.tomlcompat import tomllib

ROOT = Path(__file__).parents[2]


@pytest.fixture
def factory(monkeypatch):
    spec = importlib.util.spec_from_file_location("factory_corpus", ROOT / "benchmarks" / "factory_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HELD_OUT_CORPUS", True)
    return module


def test_an_earlier_corpus_repository_is_seen_by_owner_and_name_or_by_name_alone(factory, tmp_path) -> None:
    listed = tmp_path / "corpora.toml"
    listed.write_text('[[corpus]]\nname = "first"\nrepos = ["tox-dev__filelock"]\n'
                      '[[corpus]]\nname = "second"\nrepos = ["Tox-Dev__FileLock", "pypa__wheel"]\n')
    seen = factory.earlier_corpora(listed)
    assert factory.run_before("TOX-DEV__filelock", seen) == "first"     # GitHub names ignore case
    assert factory.run_before("someone__filelock", seen) == "first"     # a fork or a move keeps the name
    assert factory.run_before("pypa__wheel", seen) == "second"
    assert factory.run_before("pypa__installer", seen) is None


def test_under_held_out_corpus_a_listed_repository_is_not_held_out(factory, tmp_path, monkeypatch) -> None:
    listed = tmp_path / "corpora.toml"
    listed.write_text('[[corpus]]\nname = "first"\nrepos = ["lark-parser__lark"]\n')
    monkeypatch.setattr(factory, "CORPORA_FILE", listed)
    assert factory.part_of("lark-parser__lark") == "seen"
    assert factory.part_of("new-owner__new-repo") == "heldout"
    for name in ("lark-parser__lark", "new-owner__new-repo"):
        (tmp_path / "corpus" / name / ".git").mkdir(parents=True)
    held_out = factory.corpus(tmp_path / "corpus", "heldout", [])
    assert [clone.name for clone in held_out] == ["new-owner__new-repo"]


def test_the_printed_entry_records_the_corpus_in_the_file_format(factory, tmp_path) -> None:
    clones = [tmp_path / "a__one", tmp_path / "b__two"]
    entry = tomllib.loads(factory.corpus_entry("eleventh", clones))["corpus"][0]
    assert entry == {"name": "eleventh", "repos": ["a__one", "b__two"]}
    listed = tmp_path / "corpora.toml"
    listed.write_text(factory.corpus_entry("eleventh", clones))
    assert factory.run_before("b__two", factory.earlier_corpora(listed)) == "eleventh"


def test_the_projects_corpora_file_parses_and_names_repositories_as_owner__name(factory) -> None:
    entries = tomllib.loads(factory.CORPORA_FILE.read_text())["corpus"]
    assert len(entries) >= 10
    assert all("__" in repo for entry in entries for repo in entry["repos"])


def test_the_report_names_the_repositories_that_ran_as_seen_whatever_the_file_says_later(
        factory, tmp_path, monkeypatch, capsys) -> None:
    def row(repo: str, part: str) -> dict:
        return {"repo": repo, "part": part, "stages": [], "setups": [], "statement_sources": {}, "candidates": 1,
                "kept": 1, "gold_resolved": 1, "noop_resolved": 0, "good": 1, "audit": {}, "failures": [],
                "started": 0.0, "ended": 60.0, "seconds": 60.0}
    (tmp_path / "results.jsonl").write_text("".join(
        json.dumps(row(name, part)) + "\n" for name, part in (("a__old", "seen"), ("b__new", "heldout"))))
    listed = tmp_path / "corpora.toml"
    listed.write_text(factory.corpus_entry("this one, recorded after its run", [Path("a__old"), Path("b__new")]))
    monkeypatch.setattr(factory, "CORPORA_FILE", listed)
    factory.report(tmp_path, "all")
    assert "- run in an earlier corpus, so not held out: a__old\n" in capsys.readouterr().out
