"""collect: history walking, candidate rules, the test/code split, versions, on repos built here."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.collect import CollectOptions, collect
from issuebench.collect import history as history_mod
from issuebench.collect.candidates import detect_candidate, split_diff
from issuebench.collect.candidates import test_predicate as make_test_predicate
from issuebench.collect.history import Commit, walk_history
from issuebench.collect.versions import version_at

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@x", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "--initial-branch=main")

    def git(self, *args: str, date: str = "2021-03-04T05:06:07+02:00") -> str:
        env = {**os.environ, **ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        return subprocess.run(["git", *args], cwd=self.path, env=env, check=True, capture_output=True,
                              text=True).stdout

    def write(self, files: dict[str, str]) -> None:
        for rel, text in files.items():
            target = self.path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)

    def commit(self, message: str, files: dict[str, str], **kw: str) -> str:
        self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, **kw)
        return self.git("rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "acme__widgets")
    r.commit("init", {"pkg/m.py": "def f():\n    return 1\n", "tests/test_m.py": "def test_f():\n    pass\n",
                      "setup.cfg": "[metadata]\nversion = 2.7.1\n"})
    # A merged PR: two commits on a branch, merged with --no-ff.
    r.git("checkout", "-q", "-b", "feature")
    r.commit("fix f", {"pkg/m.py": "def f():\n    return 2\n"})
    r.commit("test f\n\nFixes #12", {"tests/test_m.py": "def test_f_returns_two():\n    assert 2\n"})
    r.git("checkout", "-q", "main")
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #34 from dev/feature",
          "-m", "Make f return two")
    # A squash-merged PR without tests, a squash with tests, and a plain commit with both.
    r.commit("Update docs (#35)", {"docs/index.md": "hello\n"})
    r.commit("Add g (#36)\n\nCloses #20", {"pkg/g.py": "def g():\n    return 3\n",
                                            "tests/test_g.py": "def test_g():\n    assert 3\n"})
    r.commit("plain change", {"pkg/m.py": "def f():\n    return 5\n", "tests/test_m.py": "def test_five():\n    pass\n"})
    return r


def test_walk_history_streams_every_main_line_commit_with_its_files(repo: Repo) -> None:
    commits = list(walk_history(repo.path))
    assert [c.subject for c in commits] == ["plain change", "Add g (#36)", "Update docs (#35)",
                                            "Merge pull request #34 from dev/feature", "init"]
    merge = commits[3]
    assert merge.is_merge and merge.body == "Make f return two"
    # Files of a merge are the whole branch against the first parent.
    assert set(merge.files) == {"pkg/m.py", "tests/test_m.py"}
    assert commits[1].body == "Closes #20"


def test_walk_history_uses_one_git_process(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = subprocess.Popen

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(history_mod.subprocess, "Popen", counting)
    assert len(list(walk_history(repo.path))) == 5
    assert len(calls) == 1


def test_walk_history_reads_odd_paths_and_messages(tmp_path: Path) -> None:
    r = Repo(tmp_path / "odd")
    r.commit("first", {"a.txt": "x"})
    r.commit("subject with \x1d and unicode é\n\nbody line\n\nsecond para",
             {"dir with space/naïve.py": "x", 'q"uote.py': "y"})
    head = next(walk_history(r.path))
    assert set(head.files) == {"dir with space/naïve.py", 'q"uote.py'}
    assert head.body == "body line\n\nsecond para"


def test_since_and_until_limit_the_walk(tmp_path: Path) -> None:
    r = Repo(tmp_path / "dated")
    r.commit("old", {"a": "1"}, date="2020-01-01T00:00:00Z")
    r.commit("mid", {"a": "2"}, date="2021-01-01T00:00:00Z")
    r.commit("new", {"a": "3"}, date="2022-01-01T00:00:00Z")
    subjects = [c.subject for c in walk_history(r.path, since="2020-06-01", until="2021-06-01")]
    assert subjects == ["mid"]


def _commit(subject: str, parents: tuple[str, ...] = ("p1",)) -> Commit:
    return Commit("c" * 40, parents, "2021-01-01T00:00:00+00:00", "2021-01-01T00:00:00+00:00", subject, "")


def test_candidate_rules() -> None:
    merge = detect_candidate(_commit("Merge pull request #7 from a/b", ("p1", "p2")))
    assert merge and merge.kind == "merge" and merge.pr_number == 7 and merge.base_commit == "p1"
    squash = detect_candidate(_commit("Fix parsing of dates (#1234)"))
    assert squash and squash.kind == "squash" and squash.label == "1234"
    assert detect_candidate(_commit("Merge branch 'x' into main", ("p1", "p2"))) is None
    assert detect_candidate(_commit("plain fix")) is None
    plain = detect_candidate(_commit("plain fix"), include_commits=True)
    assert plain and plain.kind == "commit" and plain.label == "c" * 10
    assert detect_candidate(_commit("root", ()), include_commits=True) is None


def test_squash_subjects_written_by_hand_name_their_pull_request_and_issue() -> None:
    from issuebench.collect.statements import linked_issues

    # aiostream's subjects: "(PR #N)", "(issue #M, PR #N)", "(issue #M)" for a commit of its own
    for subject, number in [("Improve typing of `async_` (PR #139)", 139),
                            ("Fix typing for stream.create.just (issue #133, PR #134)", 134),
                            ("Use `is` instead of `isinstance` (fixup for #135, PR #136)", 136),
                            ("Add sources operator (PR #108, issue #95)", 108)]:
        squash = detect_candidate(_commit(subject))
        assert squash and squash.kind == "squash" and squash.pr_number == number, subject
    assert detect_candidate(_commit("Fix strict `zip` of items that fail on `__eq__` (issue #135)")) is None
    assert linked_issues("Fix strict `zip` of items that fail on `__eq__` (issue #135)", "o/n") == [135]
    assert linked_issues("Fix typing (issue #133, PR #134)", "o/n") == [133]
    assert linked_issues("Drop python 3.8 (see the docs)", "o/n") == []


def test_test_path_rules_default_and_per_repository() -> None:
    is_test = make_test_predicate()
    assert is_test("tests/test_a.py") and is_test("pkg/test_b.py") and is_test("pkg/c_test.py")
    assert is_test("testing/helpers.py") and is_test("conftest.py")
    assert not is_test("src/_pytest/python.py") and not is_test("doc/en/latest/index.rst")
    custom = make_test_predicate(["spec/", "*_spec.py", "!spec/fixtures/*"])
    assert custom("spec/a.py") and custom("lib/x_spec.py")
    assert not custom("spec/fixtures/data.py") and not custom("tests/test_a.py")


def test_split_diff_keeps_file_sections_verbatim() -> None:
    diff = ("diff --git a/pkg/m.py b/pkg/m.py\n--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1 +1 @@\n-a\n+b\n"
            "diff --git a/tests/test_m.py b/tests/test_m.py\n--- a/tests/test_m.py\n+++ b/tests/test_m.py\n"
            "@@ -1 +1 @@\n-c\n+d\n")
    code, tests = split_diff(diff, make_test_predicate())
    assert code.startswith("diff --git a/pkg/m.py") and "tests/" not in code
    assert tests.startswith("diff --git a/tests/test_m.py") and code + tests == diff


def test_collect_builds_rows_from_prs_only_by_default(repo: Repo) -> None:
    result = collect(repo.path, CollectOptions(run_setup=False))
    ids = [t.instance_id for t in result.tasks]
    assert ids == ["acme__widgets-34", "acme__widgets-36"]
    pr = result.tasks[0]
    merge_sha = repo.git("rev-parse", "HEAD~3").strip()
    assert pr.repo == "acme/widgets"
    assert pr.base_commit == repo.git("rev-parse", f"{merge_sha}^1").strip()
    assert "pkg/m.py" in pr.patch and "tests/" not in pr.patch
    assert "tests/test_m.py" in pr.test_patch and "pkg/" not in pr.test_patch
    assert pr.problem_statement == "Make f return two" and pr.model_extra["problem_source"] == "pr_message"
    assert pr.created_at == "2021-03-04T03:06:07Z"
    assert pr.version == "2.7" and pr.environment_setup_commit
    table = result.table.to_dict()
    assert table["stages"]["commits scanned"] == 7  # the whole graph: branch commits too
    assert table["stages"]["candidates"] == 3 and table["stages"]["with tests"] == 2
    assert table["rejected"] == {"no test change": 1}


def test_a_pull_request_changing_only_housekeeping_files_besides_tests_is_no_candidate(repo: Repo) -> None:
    # zope's template updates: CI workflows, a manifest, editor settings and a test tweak, no code.
    repo.commit("Update to the latest c-code template (#37)", {
        ".github/workflows/tests.yml": "on: push\n", ".meta.toml": "[meta]\n", "MANIFEST.in": "include *.txt\n",
        ".manylinux-install.sh": "echo\n", "tests/test_m.py": "def test_f():\n    assert 1\n"})
    # The same files beside a change of the package: a candidate, its gold patch whole.
    repo.commit("Fix f and the CI (#38)", {".github/workflows/tests.yml": "on: [push]\n",
                                            "pkg/m.py": "def f():\n    return 6\n",
                                            "tests/test_m.py": "def test_six():\n    assert 6\n"})
    result = collect(repo.path, CollectOptions(run_setup=False))
    tasks = {t.instance_id: t for t in result.tasks}
    assert "acme__widgets-37" not in tasks
    assert ".github/workflows/tests.yml" in tasks["acme__widgets-38"].patch
    assert result.table.to_dict()["rejected"] == {"no test change": 1, "no code change": 1}


def test_collect_commits_mode_and_max(repo: Repo) -> None:
    result = collect(repo.path, CollectOptions(include_commits=True, run_setup=False))
    assert [t.model_extra["problem_source"] for t in result.tasks] == ["pr_message", "pr_message",
                                                                       "commit_message"]
    newest_only = collect(repo.path, CollectOptions(include_commits=True, max_tasks=1, run_setup=False))
    assert [t.problem_statement for t in newest_only.tasks] == ["plain change"]


def test_a_main_line_commit_that_closes_an_issue_is_a_candidate_without_commits_mode(repo: Repo) -> None:
    # mako lands through Gerrit: its fixes reach the main line as plain commits saying "Fixes: #N".
    repo.commit("Escape quotes in names\n\nFixes: #41", {"pkg/m.py": "def f():\n    return 7\n",
                                                        "tests/test_m.py": "def test_seven():\n    pass\n"})
    sha = repo.git("rev-parse", "HEAD").strip()
    # a trailer linking one of this repository's issues counts; another repository's does not
    linked = repo.commit("fix: escape output\n\nIssue-43: https://github.com/acme/widgets/issues/43",
                         {"pkg/m.py": "def f():\n    return 8\n", "tests/test_m.py": "def test_eight():\n    pass\n"})
    repo.commit("fix: follow upstream\n\nIssue-7: https://github.com/other/lib/issues/7",
                {"pkg/m.py": "def f():\n    return 9\n", "tests/test_m.py": "def test_nine():\n    pass\n"})
    result = collect(repo.path, CollectOptions(run_setup=False))
    tasks = {t.instance_id: t for t in result.tasks}
    issue_fix = tasks[f"acme__widgets-{sha[:10]}"]
    assert issue_fix.model_extra["problem_source"] == "commit_message"
    assert "Escape quotes in names" in issue_fix.problem_statement
    assert issue_fix.base_commit == repo.git("rev-parse", "HEAD~3").strip()
    # a plain commit that names no issue stays out unless --commits asks for every one
    assert not any("plain change" in t.problem_statement for t in result.tasks)
    assert set(tasks) == {f"acme__widgets-{sha[:10]}", f"acme__widgets-{linked[:10]}", "acme__widgets-34",
                          "acme__widgets-36"}


def test_require_issue_offline_rejects_with_reason(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    result = collect(repo.path, CollectOptions(require_issue=True, run_setup=False))
    assert result.tasks == []
    assert result.table.rejected["no linked issue"] == 2


def test_versions_from_tags_then_dunder_version(tmp_path: Path) -> None:
    r = Repo(tmp_path / "v")
    first = r.commit("one", {"pkg/__init__.py": "__version__ = '0.3.9'\n"})
    assert version_at(r.path, first) == "0.3"
    r.git("tag", "v1.4.2")
    second = r.commit("two", {"pkg/x.py": "x = 1\n"})
    assert version_at(r.path, second) == "1.4"


def test_a_tag_of_another_package_in_the_repository_is_not_the_projects_version(tmp_path: Path) -> None:
    """zarr-python tags its sub-packages' releases (`zarr_indexing-v0.2.1`) beside its own
    (`v3.3.0`): the nearest tag of another package gave zarr's tasks versions 0.2 and 0.5."""
    r = Repo(tmp_path / "acme__widgets-python")
    r.commit("one", {"src/widgets/a.py": "a = 1\n"})
    r.git("tag", "v3.3.0")
    r.commit("two", {"packages/gears/src/gears/a.py": "g = 1\n"})
    r.git("tag", "gears-v0.2.1")
    third = r.commit("three", {"src/widgets/a.py": "a = 3\n"})
    assert version_at(r.path, third) == "3.3"
    r.git("tag", "widgets-3.5.0")                            # the project's own name as prefix
    assert version_at(r.path, third) == "3.5"
    # Without a plain tag, a prefixed one is all there is and still counts (sympy's `sympy-1.1.1`).
    lone = Repo(tmp_path / "o__lone")
    lone.commit("one", {"x.py": "x = 1\n"})
    lone.git("tag", "lonely_pkg-0.7.0")
    assert version_at(lone.path, lone.commit("two", {"x.py": "x = 2\n"})) == "0.7"


def test_environment_setup_commit_is_newest_base_of_the_version_group(tmp_path: Path) -> None:
    r = Repo(tmp_path / "o__grp")
    r.commit("init", {"pkg/a.py": "a = 0\n", "tests/test_a.py": "t = 0\n"}, date="2020-01-01T00:00:00Z")
    r.git("tag", "v1.0.0")
    for i in (1, 2):
        r.commit(f"change {i} (#{i})", {"pkg/a.py": f"a = {i}\n", "tests/test_a.py": f"t = {i}\n"},
                 date=f"2020-0{i + 1}-01T00:00:00Z")
    r.git("tag", "v2.0.0")
    r.commit("change 3 (#3)", {"pkg/a.py": "a = 3\n", "tests/test_a.py": "t = 3\n"}, date="2020-05-01T00:00:00Z")
    tasks = {t.instance_id: t for t in collect(r.path, CollectOptions(run_setup=False)).tasks}
    assert tasks["o__grp-1"].version == tasks["o__grp-2"].version == "1.0"
    assert tasks["o__grp-3"].version == "2.0"
    assert tasks["o__grp-1"].environment_setup_commit == tasks["o__grp-2"].base_commit
    assert tasks["o__grp-3"].environment_setup_commit == tasks["o__grp-3"].base_commit


def test_collect_cli_writes_jsonl_and_pipeline_table(repo: Repo, tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.toml"
    recipe.write_text('python = "3.11"\npackages = ["pytest"]\n')
    out = tmp_path / "out" / "cand.jsonl"
    res = CliRunner().invoke(app, ["collect", str(repo.path), "-o", str(out), "--recipe", str(recipe),
                                   "--name", "acme/widgets"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["instance_id"] for r in rows] == ["acme__widgets-34", "acme__widgets-36"]
    assert rows[0]["env"]["packages"] == ["pytest"]
    table = json.loads((tmp_path / "out" / "cand.pipeline.json").read_text())
    assert table["stages"]["set up"] == 2


def test_collect_cli_names_a_bad_recipe_field(repo: Repo, tmp_path: Path) -> None:
    recipe = tmp_path / "bad.toml"
    recipe.write_text('python = "3.11"\ntest_directives = "maybe"\n')
    res = CliRunner().invoke(app, ["collect", str(repo.path), "-o", str(tmp_path / "c.jsonl"),
                                   "--recipe", str(recipe)])
    text = " ".join(res.output.split())
    assert res.exit_code == 2
    assert "bad.toml" in text and "test_directives" in text


def test_collect_cli_rejects_a_path_that_is_not_a_repo(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["collect", str(tmp_path)])
    assert res.exit_code == 2 and "not a git repository" in " ".join(res.output.split())


def test_a_pr_whose_test_change_is_only_comments_is_rejected_and_its_place_goes_to_the_next(repo: Repo) -> None:
    # A type checker's upgrade: code changes, and the tests lose a `# type: ignore` comment only.
    repo.commit("Bump mypy (#37)", {"pkg/m.py": "def f() -> int:\n    return 5\n",
                                    "tests/test_m.py": "def test_five():\n    pass  # type: ignore\n"})
    repo.commit("Bump mypy again (#38)", {"pkg/m.py": "def f() -> int:\n    return 6\n",
                                          "tests/test_m.py": "def test_five():\n    pass\n"})
    result = collect(repo.path, CollectOptions(run_setup=False, max_tasks=1))
    assert [t.instance_id for t in result.tasks] == ["acme__widgets-36"]
    assert result.table.to_dict()["rejected"]["test change is only comments"] == 2
