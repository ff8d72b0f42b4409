"""What lands in a history, before any diff: every merged pull request of every branch and tag,
and every main-line commit that says which issue it fixes (with --commits, every other one too),
each with where its gold diff starts and ends; with the API, the pull request's own base."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from issuebench.collect import pipeline as P
from issuebench.collect.history import Commit, git, pull_heads, walk_graph, walked_refs
from issuebench.collect.pulls import find_pulls
from issuebench.collect.statements import GitHubClient, GitHubError, linked_issues


def utc_iso(date: str) -> str:
    """git's ISO dates carry offsets; rows use UTC with Z, like the reference."""
    return datetime.fromisoformat(date).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Landing:
    """One candidate before its diff: what lands, where its gold diff starts and ends."""

    kind: str  # merge | squash | rebase | commit
    pr_number: int | None
    commit: Commit  # the landing commit (or the plain commit)
    base_commit: str
    diff_from: str
    diff_to: str
    created_at: str
    created_at_source: str
    base_source: str
    pull: dict | None = None

    @property
    def label(self) -> str:
        return str(self.pr_number) if self.pr_number is not None else self.commit.sha[:10]


def find_landings(repo_dir: Path, table: P.PipelineTable, *, name: str = "", include_commits: bool = False,
                  since: str | None = None, until: str | None = None) -> tuple[list[Landing], list[str]]:
    """Every merged pull request of every branch and tag, and every main-line commit that says
    it closes an issue (with --commits, every other one too), newest landing first."""
    revs = walked_refs(repo_dir)
    graph = walk_graph(repo_dir, revs, since=since, until=until)
    table.add("commits scanned", len(graph.commits))
    if not graph.commits:
        return [], []
    head = git(repo_dir, "rev-parse", "HEAD", check=False).strip()
    main_line = graph.first_parent_line(head)
    plans: list[Landing] = []
    landed: set[str] = set()
    for pull in find_pulls(repo_dir, graph, pull_heads(repo_dir), set(main_line), revs):
        landed.add(pull.landing.sha)
        created = (utc_iso_epoch(pull.first_author_time) if pull.first_author_time is not None
                   else utc_iso(pull.landing.author_date))
        plans.append(Landing(pull.kind, pull.number, pull.landing, pull.base_commit, pull.diff_from,
                           pull.head or pull.landing.sha, created, "first commit of the pull request",
                           pull.base_rule))
    by_sha = {c.sha: c for c in graph.commits}
    for sha in main_line:
        commit = by_sha[sha]
        if sha in landed or not commit.parents or commit.is_merge:
            continue
        # Without --commits, a main-line commit is a candidate when its message says it closes an
        # issue ("Fixes: #438") or links one of this repository's issues ("Issue-100: https://
        # github.com/o/n/issues/100"): projects that land through Gerrit or by direct push (mako: 8
        # pull requests in 1017 commits) fix their issues that way, as a pull request would.
        if include_commits or linked_issues(commit.message, name):
            plans.append(Landing("commit", None, commit, commit.parents[0], commit.parents[0], sha,
                               utc_iso(commit.author_date), "commit", "first parent"))
    times = {c.sha: i for i, c in enumerate(graph.commits)}  # topological, newest first
    plans.sort(key=lambda p: times[p.commit.sha])
    return plans, main_line


def from_api(repo_dir: Path, name: str, plan: Landing, client: GitHubClient) -> None:
    """With the API: the pull request's own base.sha and created_at, as the reference takes them."""
    try:
        pull = client.pull(name, plan.pr_number) if plan.pr_number is not None else None
    except GitHubError:
        return  # the API went away mid-run: the offline estimate stands
    if not pull:
        return
    plan.pull = pull
    base = (pull.get("base") or {}).get("sha")
    head = (pull.get("head") or {}).get("sha")
    if head and _has_commit(repo_dir, head):
        plan.diff_to = head
    if base and _has_commit(repo_dir, base):
        plan.base_commit = base
        plan.base_source = "pull request base.sha"
        merge_base = git(repo_dir, "merge-base", base, plan.diff_to, check=False).strip()
        plan.diff_from = merge_base or base
    if pull.get("created_at"):
        plan.created_at = utc_iso(str(pull["created_at"]).replace("Z", "+00:00"))
        plan.created_at_source = "pull request"


def _has_commit(repo_dir: Path, sha: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=repo_dir,
                          capture_output=True, check=False).returncode == 0


def utc_iso_epoch(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
