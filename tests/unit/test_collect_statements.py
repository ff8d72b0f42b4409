"""Problem statements: linked issues over a real HTTP server answering like the GitHub API,
and the offline fallback with solution leaks stripped."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from issuebench.collect import CollectOptions, collect
from issuebench.collect.statements import GitHubClient, leak_free_message, linked_issues
from tests.unit.test_collect_mining import Repo

ISSUES = {
    12: {"number": 12, "title": "f returns the wrong value", "body": "Calling f() gives 1, expected 2."},
    13: {"number": 13, "title": "a PR, not an issue", "body": "x", "pull_request": {"url": "..."}},
}
# Comments on #12: one before the first commit of the fix (a hint), one after (may leak the fix).
COMMENTS = {12: [{"body": "Seen on 2.7 too.", "created_at": "2021-03-01T00:00:00Z"},
                 {"body": "Confirmed, I think it is the early return.", "created_at": "2021-03-02T00:00:00Z"},
                 {"body": "Fixed by returning 2 in f.", "created_at": "2021-03-09T00:00:00Z"}]}
PULLS = {34: {"number": 34, "title": "Make f return two", "body": "This resolves #12 and relates to #13."}}


class FakeGitHub(BaseHTTPRequestHandler):
    requests: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:
        FakeGitHub.requests.append((self.path, self.headers.get("Authorization")))
        path, _, query = self.path.partition("?")
        parts = path.strip("/").split("/")
        status, body, link = 404, {"message": "Not Found"}, None
        if parts[:3] == ["repos", "acme", "widgets"]:
            kind, number = parts[3], int(parts[4])
            if kind == "issues" and len(parts) == 5 and number in ISSUES:
                status, body = 200, ISSUES[number]
            elif kind == "issues" and parts[5:] == ["comments"]:
                # Two pages, to check that the client follows Link: rel="next".
                comments = COMMENTS.get(number, [])
                if "page=2" in query:
                    status, body = 200, comments[2:]
                else:
                    status, body = 200, comments[:2]
                    link = f'<http://{self.headers["Host"]}{path}?per_page=100&page=2>; rel="next"'
            elif kind == "pulls" and number in PULLS:
                status, body = 200, PULLS[number]
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if link:
            self.send_header("Link", link)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeGitHub.requests = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "widgets")
    r.commit("init", {"pkg/m.py": "def f():\n    return 1\n", "tests/test_m.py": "x = 0\n"},
             date="2021-02-01T00:00:00Z")
    r.git("checkout", "-q", "-b", "feature")
    r.commit("fix f", {"pkg/m.py": "def f():\n    return 2\n"}, date="2021-03-05T00:00:00Z")
    r.commit("test", {"tests/test_m.py": "def test_f_is_two():\n    assert 2\n"}, date="2021-03-06T00:00:00Z")
    r.git("checkout", "-q", "main")
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #34 from dev/feature",
          "-m", "Make f return two", date="2021-03-10T00:00:00Z")
    return r


def test_linked_issue_forms() -> None:
    text = ("Fixes #1, closes: #2 and RESOLVED #3. Also fixes acme/widgets#4 but not other/repo#5.\n"
            "See https://github.com/acme/widgets/issues/6 and refs #7. fixes #1 again")
    assert linked_issues(text, "acme/widgets") == [1, 2, 3, 4, 6]


def test_collect_takes_issue_text_and_early_comments_from_the_api(
        repo: Repo, api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    result = collect(repo.path, CollectOptions(repo_name="acme/widgets", github_api=api, run_setup=False))
    [task] = result.tasks
    assert task.model_extra["problem_source"] == "issue"
    assert task.problem_statement.startswith("f returns the wrong value\nCalling f() gives 1, expected 2.")
    assert "a PR, not an issue" not in task.problem_statement  # #13 is a pull request
    # Hints: comments before the branch's first commit (2021-03-05), from both pages.
    assert task.hints_text == "Seen on 2.7 too.\nConfirmed, I think it is the early return."
    assert task.model_extra["issue_numbers"] == [12]
    assert all(auth == "Bearer t0ken" for _, auth in FakeGitHub.requests)


def test_require_issue_keeps_prs_whose_issue_the_api_returns(
        repo: Repo, api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    opts = CollectOptions(repo_name="acme/widgets", github_api=api, require_issue=True, run_setup=False)
    assert [t.instance_id for t in collect(repo.path, opts).tasks] == ["acme__widgets-34"]


def test_api_down_falls_back_to_the_pr_message(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    # Nothing listens on port 9 of loopback: the connection is refused at once.
    opts = CollectOptions(repo_name="acme/widgets", github_api="http://127.0.0.1:9", run_setup=False)
    [task] = collect(repo.path, opts).tasks
    assert task.model_extra["problem_source"] == "pr_message"
    assert task.problem_statement == "Make f return two"


def test_no_token_means_no_api_calls(repo: Repo, api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    collect(repo.path, CollectOptions(repo_name="acme/widgets", github_api=api, run_setup=False))
    assert FakeGitHub.requests == []
    assert GitHubClient.from_env(api) is None


PATCH = """diff --git a/pkg/m.py b/pkg/m.py
--- a/pkg/m.py
+++ b/pkg/m.py
@@ -1,2 +1,2 @@
 def f():
-    return 1
+    return compute_two(cache=True)
"""
TEST_PATCH = """diff --git a/tests/test_m.py b/tests/test_m.py
--- a/tests/test_m.py
+++ b/tests/test_m.py
@@ -0,0 +1,3 @@
+class TestCompute:
+    def test_f_uses_cache(self):
+        assert f() == 2
"""


def test_fallback_message_loses_hunks_fix_lines_test_names_and_trailers() -> None:
    message = """Make f return two (#34)

f returned 1 where callers expect 2; see test_f_uses_cache and TestCompute.

```
$ python -c 'import pkg; print(pkg.f())'
1
```

```python
return compute_two(cache=True)
```

diff --git a/pkg/m.py b/pkg/m.py
@@ -1,2 +1,2 @@
-    return 1
+    return compute_two(cache=True)

The fix:
    return compute_two(cache=True)

Signed-off-by: Dev <dev@example.org>
Co-authored-by: Other <o@example.org>"""
    text = leak_free_message(message, patch=PATCH, test_patch=TEST_PATCH)
    assert text.startswith("Make f return two\n")
    assert "compute_two" not in text and "@@" not in text and "diff --git" not in text
    assert "test_f_uses_cache" not in text and "TestCompute" not in text and "<redacted>" in text
    assert "Signed-off-by" not in text and "Co-authored-by" not in text
    # A code block that only shows the symptom stays: it is the problem, not the solution.
    assert "print(pkg.f())" in text and "callers expect 2" in text


def test_test_names_are_redacted_as_whole_words_only() -> None:
    test_patch = ("diff --git a/tests/test_m.py b/tests/test_m.py\n+def test_a():\n+def test_ab():\n"
                  "+class TestX:\n+def test_\u00fcber():\n")
    message = ("test_a fails (test_a.), test_ab too; mytest_a, test_a_b, test_abc and TestXY stay;\n"
               "TestX.method and test_\u00fcber go, test_\u00fcberall stays")
    text = leak_free_message(message, patch="", test_patch=test_patch)
    # What `re.sub(rf"\b{name}\b", ...)` per name, longest first, gave.
    expected = message
    for name in sorted(["test_a", "test_ab", "TestX", "test_\u00fcber"], key=len, reverse=True):
        expected = re.sub(rf"\b{re.escape(name)}\b", "<redacted>", expected)
    assert text == expected
    assert text.startswith("<redacted> fails (<redacted>.), <redacted> too; mytest_a, test_a_b, test_abc")
    assert "<redacted>.method" in text and "test_\u00fcberall stays" in text
