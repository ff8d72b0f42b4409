"""Problem statements: the linked issue when the GitHub API answers, else a leak-free message.

The reference takes the text of the issues a pull request resolves as the problem statement, and
the issue comments written before the pull request's first commit as hints (later comments may
discuss the fix). Offline, or for plain commits, the pull request / commit message stands in, with
whatever would hand over the solution removed: diff hunks, code blocks that quote the fix, the
names of the tests that check it, trailers.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

DEFAULT_API_ENV = "ISSUEBENCH_GITHUB_API"
_KEYWORD = r"(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)"
# "fixes #12", "Closes: #12", "resolves owner/name#12", "fixes https://github.com/o/n/issues/12"
_LINK_REFS = re.compile(
    _KEYWORD + r":?\s+(?:(?P<slug>[\w.-]+/[\w.-]+))?#(?P<num>\d+)", re.IGNORECASE)
# "Fix strict zip (issue #135)", "Add strict (issue #118, PR #119)": a subject's own note of the issue.
_LINK_NOTES = re.compile(r"[(,]\s*issue (?P<slug>)#(?P<num>\d+)", re.IGNORECASE)
_LINK_URLS = re.compile(
    r"https?://[^\s/]+/(?P<slug>[\w.-]+/[\w.-]+)/issues/(?P<num>\d+)", re.IGNORECASE)


def linked_issues(text: str, repo: str) -> list[int]:
    """Issue numbers of `repo` that text says it resolves, in order of mention, no duplicates."""
    found: list[tuple[int, int]] = []
    for pattern in (_LINK_REFS, _LINK_NOTES, _LINK_URLS):
        for match in pattern.finditer(text):
            slug = match.group("slug")
            if slug and slug.lower() != repo.lower():
                continue
            found.append((match.start(), int(match.group("num"))))
    numbers: list[int] = []
    for _, num in sorted(found):
        if num not in numbers:
            numbers.append(num)
    return numbers


class GitHubError(Exception):
    pass


@dataclass
class GitHubClient:
    """The few GitHub REST calls collect needs, over urllib; base_url points anywhere (tests
    run a local server that answers like the API)."""

    base_url: str
    token: str | None = None
    timeout: float = 20.0
    # A server error or a rate limit is waited out and tried again this many times; a wait the
    # server asks for (Retry-After, X-RateLimit-Reset) is honoured up to max_wait seconds.
    retries: int = 3
    max_wait: float = 60.0

    @classmethod
    def from_env(cls, base_url: str | None = None) -> GitHubClient | None:
        """A client when a token is set (unauthenticated calls are rate-limited to nothing useful)."""
        token = os.environ.get("GITHUB_TOKEN")
        if not token:
            return None
        url = base_url or os.environ.get(DEFAULT_API_ENV) or "https://api.github.com"
        return cls(url.rstrip("/"), token)

    def _get(self, path: str) -> tuple[object, str]:
        for attempt in range(self.retries + 1):
            try:
                return self._get_once(path)
            except urllib.error.HTTPError as exc:
                wait = _retry_wait(exc, attempt)
                if wait is None or attempt == self.retries or wait > self.max_wait:
                    raise GitHubError(f"GET {path}: {exc}") from exc
                time.sleep(wait)
            except (urllib.error.URLError, TimeoutError, OSError, json.JSONDecodeError) as exc:
                raise GitHubError(f"GET {path}: {exc}") from exc
        raise AssertionError("unreachable")

    def _get_once(self, path: str) -> tuple[object, str]:
        req = urllib.request.Request(f"{self.base_url}{path}" if path.startswith("/") else path)
        req.add_header("Accept", "application/vnd.github+json")
        req.add_header("User-Agent", "issuebench-collect")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:
            return json.loads(resp.read().decode()), resp.headers.get("Link", "")

    def _get_all(self, path: str) -> list[dict]:
        items: list[dict] = []
        url: str | None = path + ("&" if "?" in path else "?") + "per_page=100"
        while url:
            data, link = self._get(url)
            if not isinstance(data, list):
                raise GitHubError(f"GET {path}: expected a list")
            items.extend(data)
            url = _next_link(link)
        return items

    def issue(self, repo: str, number: int) -> dict | None:
        try:
            data, _ = self._get(f"/repos/{repo}/issues/{number}")
        except GitHubError as exc:
            if "404" in str(exc):
                return None
            raise
        return data if isinstance(data, dict) else None

    def issue_comments(self, repo: str, number: int) -> list[dict]:
        return self._get_all(f"/repos/{repo}/issues/{number}/comments")

    def pull(self, repo: str, number: int) -> dict | None:
        try:
            data, _ = self._get(f"/repos/{repo}/pulls/{number}")
        except GitHubError as exc:
            if "404" in str(exc):
                return None
            raise
        return data if isinstance(data, dict) else None


def _retry_wait(exc: urllib.error.HTTPError, attempt: int) -> float | None:
    """Seconds to wait before asking again, or None when asking again cannot help: a server
    error (5xx) backs off; a rate limit (429, or 403 with no requests left) waits as told."""
    headers = exc.headers or {}
    limited = exc.code == 429 or (exc.code == 403 and headers.get("X-RateLimit-Remaining") == "0")
    if not limited and exc.code < 500:
        return None
    after = headers.get("Retry-After")
    if after and after.strip().isdigit():
        return float(after)
    reset = headers.get("X-RateLimit-Reset")
    if limited and reset and reset.strip().isdigit():
        return max(0.0, float(reset) - time.time())
    return 2.0 ** attempt


def _next_link(link_header: str) -> str | None:
    for part in link_header.split(","):
        match = re.search(r'<([^>]+)>;\s*rel="next"', part)
        if match:
            return match.group(1)
    return None


@dataclass
class Statement:
    problem_statement: str
    hints_text: str
    problem_source: str  # "issue" | "pr_message" | "commit_message"
    issue_numbers: list[int]
    api_error: str = ""  # why the API could not give the linked issues (the message stands in)


def statement_from_issues(client: GitHubClient, repo: str, numbers: Iterable[int],
                          first_commit_date: str | None) -> Statement | None:
    """Title + body of each linked issue that really is an issue; comments made before the
    first commit of the fix become hints."""
    parts: list[str] = []
    hints: list[str] = []
    used: list[int] = []
    cutoff = _parse_date(first_commit_date)
    for number in numbers:
        issue = client.issue(repo, number)
        if not issue or "pull_request" in issue:
            continue  # a reference to another pull request is not a problem statement
        used.append(number)
        parts.append(f"{issue.get('title', '').strip()}\n{(issue.get('body') or '').strip()}\n")
        for comment in client.issue_comments(repo, number):
            created = _parse_date(comment.get("created_at"))
            if cutoff is not None and created is not None and created >= cutoff:
                continue
            body = (comment.get("body") or "").strip()
            if body:
                hints.append(body)
    if not used:
        return None
    return Statement("\n".join(parts), "\n".join(hints), "issue", used)


def _parse_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


# --- leak stripping -------------------------------------------------------------------------

_TRAILER = re.compile(r"^(?:[A-Z][\w-]*-by|Co-authored-by|Change-Id|Reviewed-on|Cc):", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_DIFF_LINE = re.compile(r"^(?:diff --git |index [0-9a-f]+\.\.|--- (?:a/|/dev/null)|\+\+\+ (?:b/|/dev/null)|@@ )")
_TEST_NAME = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)|^\s*class\s+(Test\w*)", re.MULTILINE)
_PR_SUFFIX = re.compile(r"\s*\(#\d+\)\s*$")
_MERGE_SUBJECT = re.compile(r"^Merge pull request #\d+ from \S+\s*$")
_WORD = re.compile(r"\w+")
REDACTED = "<redacted>"


def leak_free_message(message: str, *, patch: str, test_patch: str) -> str:
    """The message with everything that would give the solution away removed."""
    # Only the message's own lines are looked up among the fix's lines, and each of those is
    # part of the patch's text: when no message line is, the patch need not be cut into lines.
    asked = {raw.strip() for raw in message.splitlines()}
    added_code = {code for line in patch.splitlines()
                  if line[:1] == "+" and not line.startswith("+++") and len(code := line[1:].strip()) > 3
                  } if any(len(line) > 3 and line in patch for line in asked) else set()
    out: list[str] = []
    in_fence = False
    fence_lines: list[str] = []
    in_diff = False
    for raw in message.splitlines():
        line = raw.rstrip()
        if _FENCE.match(line):
            if in_fence:
                # A code block that quotes the fix or is a diff is dropped whole; others stay.
                if not _leaks_code(fence_lines, added_code):
                    out.extend(["```", *fence_lines, "```"])
                fence_lines = []
            in_fence = not in_fence
            continue
        if in_fence:
            fence_lines.append(line)
            continue
        if _DIFF_LINE.match(line):
            in_diff = True
            continue
        if in_diff:
            if line[:1] in ("+", "-", " ", "\\") and line.strip():
                continue
            in_diff = False
        if _TRAILER.match(line) or _MERGE_SUBJECT.match(line):
            continue
        if line.strip() and line.strip() in added_code:
            continue  # a line of the fix pasted into the message
        out.append(line)
    text = "\n".join(out)
    if out:
        text = _PR_SUFFIX.sub("", out[0]) + ("\n" + "\n".join(out[1:]) if len(out) > 1 else "")
    if "test" in text or "Test" in text:  # every test name starts so
        test_names = {a or b for a, b in _TEST_NAME.findall(
            "\n".join(line[1:] for line in test_patch.splitlines() if line.startswith(("+", " ", "-"))))}
        # A name is all word characters, so `\bname\b` matches exactly the whole words equal to
        # it: one pass over the words replaces them all (a pattern per name overflowed re's cache,
        # a compile per name and task, most of collect's own time on sympy).
        text = _WORD.sub(lambda m: REDACTED if m.group() in test_names else m.group(), text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _leaks_code(block: list[str], added_code: set[str]) -> bool:
    if any(_DIFF_LINE.match(line) for line in block):
        return True
    return any(line.strip() in added_code for line in block if line.strip())


def fallback_statement(message: str, *, kind: str, patch: str, test_patch: str) -> Statement:
    source = "commit_message" if kind == "commit" else "pr_message"
    return Statement(leak_free_message(message, patch=patch, test_patch=test_patch), "", source, [])
