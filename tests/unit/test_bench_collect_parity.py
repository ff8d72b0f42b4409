"""benchmarks/collect_parity.py: with the loopback API, whose answer is the row's own base commit,
the output calls "base equal" a plumbing check; offline it is the measure and says nothing of the kind."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.gitrepo import commit_files, git, init_repo

ROOT = Path(__file__).parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("collect_parity", ROOT / "benchmarks" / "collect_parity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["collect_parity"] = module
    spec.loader.exec_module(module)
    return module


def _clone_and_rows(tmp_path: Path) -> Path:
    clone = tmp_path / "clones" / "o__a"
    base = init_repo(clone, {"a.py": "def f():\n    return 1\n", "tests/test_a.py": "def test_f():\n    pass\n"},
                     date="2020-01-01T00:00:00Z")
    git(clone, "checkout", "-q", "-b", "fix")
    commit_files(clone, {"a.py": "def f():\n    return 2\n", "tests/test_a.py": "def test_f():\n    assert 1\n"},
                 "fix f", date="2020-01-02T00:00:00Z")
    git(clone, "checkout", "-q", "main")
    git(clone, "merge", "-q", "--no-ff", "fix", "-m", "Merge pull request #7 from someone/fix",
        date="2020-01-03T00:00:00Z")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"instance_id": "o__a-7", "repo": "o/a", "base_commit": base,
                                "created_at": "2020-01-02T00:00:00Z", "patch": "diff --git a/a.py b/a.py\n",
                                "test_patch": "diff --git a/tests/test_a.py b/tests/test_a.py\n"}) + "\n")
    return rows


def test_the_api_run_is_called_a_plumbing_check(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _module()
    rows = _clone_and_rows(tmp_path)
    # main sets these for its loopback server; monkeypatch puts the caller's back afterwards.
    monkeypatch.setenv("GITHUB_TOKEN", "unset-by-the-test")
    monkeypatch.setenv("ISSUEBENCH_GITHUB_API", "http://127.0.0.1:9")
    mod.main(["--repos", str(tmp_path / "clones"), "--rows", str(rows), "--api"])
    text = capsys.readouterr().out
    assert "plumbing check, not a measure" in text
    assert "| base equal (the API's answer, the row's own) |" in text
    assert "| o/a |" in text


def test_the_offline_run_is_the_measure(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _module()
    rows = _clone_and_rows(tmp_path)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    mod.main(["--repos", str(tmp_path / "clones"), "--rows", str(rows)])
    text = capsys.readouterr().out
    assert "plumbing" not in text
    assert "| found | base equal | code files equal |" in text
