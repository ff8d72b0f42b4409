"""collect finds pull requests as the reference does: on maintenance branches, rebase-merged,
with the base they were opened against, without changelogs, and with the API's base.sha."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from issuebench.collect import CollectOptions, collect
from tests.unit.test_collect_mining import Repo

CODE = "pkg/m.py"
TEST = "tests/test_m.py"


def _pr(repo: Repo, branch: str, n: int, date: str, into: str = "main", merge_date: str | None = None,
        changelog: bool = False) -> str:
    """A branch with one code+test commit merged --no-ff as pull request #n; returns its head."""
    repo.git("checkout", "-q", "-b", branch)
    files = {CODE: f"v = {n}\n", TEST: f"def test_{n}():\n    pass\n"}
    if changelog:
        files["CHANGES.rst"] = f"- change {n}\n"
    head = repo.commit(f"change {n}", files, date=date)
    repo.git("checkout", "-q", into)
    repo.git("merge", "-q", "--no-ff", branch, "-m", f"Merge pull request #{n} from dev/{branch}",
             date=merge_date or date)
    return head


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "acme__widgets")
    r.commit("init", {CODE: "v = 0\n", TEST: "x = 0\n", "CHANGES.rst": "start\n"}, date="2021-01-01T00:00:00Z")
    return r


def test_base_is_the_target_tip_when_the_branch_was_started(repo: Repo) -> None:
    # PR 5 branches off, then main moves on (another commit) before PR 5 is merged: the
    # reference's base is main as it was when the branch was made, not the merge's parent.
    opened_on = repo.commit("docs", {"README": "x\n"}, date="2021-01-02T00:00:00Z")
    repo.git("checkout", "-q", "-b", "later")
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-q", "-b", "pr5")
    repo.commit("change 5", {CODE: "v = 5\n", TEST: "def test_5():\n    pass\n"}, date="2021-01-03T00:00:00Z")
    repo.git("checkout", "-q", "main")
    repo.commit("unrelated", {"other.txt": "y\n"}, date="2021-01-04T00:00:00Z")
    repo.git("merge", "-q", "--no-ff", "pr5", "-m", "Merge pull request #5 from dev/pr5",
             date="2021-01-05T00:00:00Z")
    task = collect(repo.path, CollectOptions(run_setup=False)).tasks[0]
    assert task.instance_id == "acme__widgets-5"
    assert task.base_commit == opened_on
    assert task.model_extra["created_at_source"] == "first commit of the pull request"
    assert task.created_at == "2021-01-03T00:00:00Z"
    assert "other.txt" not in task.patch  # the diff starts where the branch does


def test_maintenance_branch_merge_found_through_a_tag_and_changelog_left_out(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "1.0.x")
    _pr(repo, "fix7", 7, "2021-02-01T00:00:00Z", into="1.0.x", changelog=True)
    repo.git("tag", "v1.0.1")
    repo.git("checkout", "-q", "main")
    repo.git("branch", "-D", "1.0.x", "fix7")  # the branch is gone; its release tag keeps it
    tasks = {t.instance_id: t for t in collect(repo.path, CollectOptions(run_setup=False)).tasks}
    assert "acme__widgets-7" in tasks
    task = tasks["acme__widgets-7"]
    assert "CHANGES.rst" not in task.patch and CODE in task.patch
    kept = collect(repo.path, CollectOptions(run_setup=False, keep_changelog=True)).tasks[0]
    assert "CHANGES.rst" in kept.patch


def test_rebase_merged_pull_request_found_by_its_head_ref(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD").strip()
    repo.git("checkout", "-q", "-b", "pr9")
    head = repo.commit("change 9", {CODE: "v = 9\n", TEST: "def test_9():\n    pass\n"},
                       date="2021-03-01T00:00:00Z")
    repo.git("checkout", "-q", "main")
    repo.commit("meanwhile", {"other.txt": "m\n"}, date="2021-03-02T00:00:00Z")
    # "Rebase and merge": the same change replayed (same author date and subject), new committer date.
    repo.git("cherry-pick", head, date="2021-03-03T00:00:00Z")
    repo.git("update-ref", "refs/pull/9/head", head)
    repo.git("branch", "-D", "pr9")
    tasks = collect(repo.path, CollectOptions(run_setup=False)).tasks
    assert [t.instance_id for t in tasks] == ["acme__widgets-9"]
    assert tasks[0].model_extra["merge_kind"] == "rebase"
    assert tasks[0].base_commit == base


PULLS: dict[int, dict] = {}


class FakePulls(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        parts = self.path.split("?")[0].strip("/").split("/")
        status, body = 404, {"message": "Not Found"}
        if parts[3:4] == ["pulls"] and int(parts[4]) in PULLS:
            status, body = 200, PULLS[int(parts[4])]
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakePulls)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_with_the_api_base_and_created_at_are_the_pull_requests(repo: Repo, api: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    first = repo.git("rev-parse", "HEAD").strip()
    repo.git("checkout", "-q", "-b", "pr11")
    head = repo.commit("change 11", {CODE: "v = 11\n", TEST: "def test_11():\n    pass\n"},
                       date="2021-04-02T00:00:00Z")
    repo.git("checkout", "-q", "main")
    repo.commit("later on main", {"other.txt": "z\n"}, date="2021-04-01T00:00:00Z")
    repo.git("merge", "-q", "--no-ff", "pr11", "-m", "Merge pull request #11 from dev/pr11",
             date="2021-04-05T00:00:00Z")
    offline = collect(repo.path, CollectOptions(run_setup=False)).tasks[0]
    assert offline.base_commit != first  # main's tip when the branch's commit was made
    # The API says the pull request was opened against `first`.
    PULLS[11] = {"number": 11, "title": "t", "body": "", "created_at": "2021-04-03T10:00:00Z",
                 "base": {"sha": first}, "head": {"sha": head}}
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    task = collect(repo.path, CollectOptions(run_setup=False, github_api=api)).tasks[0]
    assert task.base_commit == first
    assert task.model_extra["base_commit_source"] == "pull request base.sha"
    assert task.created_at == "2021-04-03T10:00:00Z"
    assert task.model_extra["created_at_source"] == "pull request"
    assert "other.txt" not in task.patch  # diffed from the merge-base of base and head


def test_versions_along_the_main_line_are_read_by_bisection() -> None:
    from issuebench.collect.versions import _bisect

    shas = [f"c{i}" for i in range(200)]
    truth = {sha: ("1.0" if i < 70 else "1.1" if i < 150 else "2.0") for i, sha in enumerate(shas)}
    calls: list[str] = []
    out: dict[str, str | None] = {}
    _bisect(shas, out, lambda batch: {sha: calls.append(sha) or truth[sha] for sha in batch})
    assert out == truth
    assert len(calls) <= 25  # a few per release, not one per base


def test_a_candidate_whose_blob_is_missing_is_rejected_and_the_run_goes_on(repo: Repo) -> None:
    _pr(repo, "pr21", 21, "2021-05-01T00:00:00Z")
    repo.git("checkout", "-q", "-b", "pr22")
    repo.commit("change 22", {CODE: "v = 22\n", TEST: "def test_22():\n    pass\n", "pkg/big.py": "lost\n"},
                date="2021-05-02T00:00:00Z")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "pr22", "-m", "Merge pull request #22 from dev/pr22",
             date="2021-05-03T00:00:00Z")
    blob = repo.git("rev-parse", "HEAD:pkg/big.py").strip()
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # a partial clone's hole
    (repo.path / "pkg" / "big.py").unlink()  # else git reads the work tree's copy
    result = collect(repo.path, CollectOptions(run_setup=False))
    assert [t.instance_id for t in result.tasks] == ["acme__widgets-21"]
    assert result.table.rejected["diff failed"] == 1
