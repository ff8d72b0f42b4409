"""`issuebench collect --require-issue` through the command line, against a real HTTP server on
loopback that answers like the GitHub API (with a server error and a rate limit on the way)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.unit.test_collect_mining import Repo

ISSUES = {12: {"number": 12, "title": "f returns the wrong value", "body": "Calling f() gives 1, expected 2."}}
PULLS = {34: {"number": 34, "title": "Make f return two", "body": "Fixes #12."},
         35: {"number": 35, "title": "Tidy g", "body": "No issue for this one."}}


class FakeGitHub(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []
    failed_once: set[str] = set()

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        FakeGitHub.seen.append((path, self.headers.get("Authorization")))
        parts = path.strip("/").split("/")
        headers: dict[str, str] = {}
        status, body = 404, {"message": "Not Found"}
        if path not in FakeGitHub.failed_once and parts[3:4] == ["pulls"]:
            # Each pull request is first answered with a server error, then a rate limit.
            FakeGitHub.failed_once.add(path)
            status, body = 502, {"message": "Bad Gateway"}
        elif path + "#limit" not in FakeGitHub.failed_once and parts[3:4] == ["pulls"]:
            FakeGitHub.failed_once.add(path + "#limit")
            status, body = 403, {"message": "API rate limit exceeded"}
            headers = {"X-RateLimit-Remaining": "0", "Retry-After": "1"}
        elif parts[3:4] == ["pulls"] and int(parts[4]) in PULLS:
            status, body = 200, PULLS[int(parts[4])]
        elif parts[3:4] == ["issues"] and len(parts) == 5 and int(parts[4]) in ISSUES:
            status, body = 200, ISSUES[int(parts[4])]
        elif parts[3:4] == ["issues"] and parts[5:] == ["comments"]:
            status, body = 200, []
        data = json.dumps(body).encode()
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    FakeGitHub.seen, FakeGitHub.failed_once = [], set()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "widgets")
    r.write({"pkg/m.py": "def f():\n    return 1\n", "pkg/g.py": "g = 1\n", "tests/test_m.py": "x = 0\n"})
    r.git("add", "-A")
    r.git("commit", "-q", "-m", "init", date="2021-02-01T00:00:00Z")
    for number, branch, files, date in ((34, "fix-f", {"pkg/m.py": "def f():\n    return 2\n",
                                                          "tests/test_m.py": "def test_f():\n    pass\n"}, "2021-03"),
                                        (35, "tidy-g", {"pkg/g.py": "g = 2\n",
                                                        "tests/test_g.py": "def test_g():\n    pass\n"}, "2021-04")):
        r.git("checkout", "-q", "-b", branch, "main")
        r.write(files)
        r.git("add", "-A")
        r.git("commit", "-q", "-m", f"change for #{number}", date=f"{date}-05T00:00:00Z")
        r.git("checkout", "-q", "main")
        r.git("merge", "-q", "--no-ff", branch, "-m", f"Merge pull request #{number} from dev/{branch}",
              date=f"{date}-10T00:00:00Z")
    return r


def _collect(repo: Repo, out: Path, *extra: str, token: str | None = "t0ken") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"}
    if token:
        env["GITHUB_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "issuebench", "collect", str(repo.path), "--name", "acme/widgets",
                           "--no-setup", "-o", str(out), *extra], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_require_issue_keeps_the_pull_request_whose_issue_the_api_gives(repo: Repo, api: str,
                                                                       tmp_path: Path) -> None:
    done = _collect(repo, tmp_path / "cand.jsonl", "--require-issue", "--github-api", api)
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in (tmp_path / "cand.jsonl").read_text().splitlines()]
    assert row["instance_id"] == "acme__widgets-34"
    assert row["problem_source"] == "issue" and row["issue_numbers"] == [12]
    assert row["problem_statement"].startswith("f returns the wrong value")
    table = json.loads((tmp_path / "cand.pipeline.json").read_text())
    assert table["rejected"]["no linked issue"] == 1             # #35 links none
    # The token went with every call, and the server error and the rate limit were waited out.
    assert {auth for _, auth in FakeGitHub.seen} == {"Bearer t0ken"}
    assert [p for p, _ in FakeGitHub.seen].count("/repos/acme/widgets/pulls/34") >= 3
    assert "candidate 1: acme__widgets-34 (statement from issue)" in done.stderr


def test_require_issue_without_a_token_is_refused_in_one_line(repo: Repo, tmp_path: Path) -> None:
    done = _collect(repo, tmp_path / "cand.jsonl", "--require-issue", token=None)
    assert done.returncode == 2
    assert "--require-issue needs GITHUB_TOKEN" in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr


def test_an_api_that_does_not_answer_is_said_not_taken_for_no_issue(repo: Repo, tmp_path: Path) -> None:
    # Nothing listens on port 9 of loopback: the connection is refused at once.
    done = _collect(repo, tmp_path / "cand.jsonl", "--require-issue", "--github-api", "http://127.0.0.1:9")
    assert done.returncode == 0, done.stderr
    table = json.loads((tmp_path / "cand.pipeline.json").read_text())
    assert table["rejected"] == {"issue lookup failed": 2}


def test_offline_rows_say_their_statement_is_the_pull_request_message(repo: Repo, tmp_path: Path) -> None:
    done = _collect(repo, tmp_path / "cand.jsonl", token=None)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "cand.jsonl").read_text().splitlines()]
    assert [r["problem_source"] for r in rows] == ["pr_message", "pr_message"]
