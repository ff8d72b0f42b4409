"""Merged pull requests in a repository's history, and the commit each one was opened against.

A pull request lands in one of three ways, each found in the walked graph (every branch and tag,
so pull requests merged into maintenance branches count too):
- a merge commit "Merge pull request #N ..." (its second parent is the pull request's head);
- a squash commit whose subject ends with "(#N)";
- a rebase: the pull request's head (refs/pull/N/head, which GitHub mirrors carry) has the same
  author, author date and subject as a commit of the history.

The reference's `base_commit` is the pull request's `base.sha`: the tip of the target branch when
the pull request was opened, moved forward when its branch is rebased on, or merged with, the
target. Offline, the rule here is "the target branch's tip at the time of the branch's latest
attachment to it": the commit date of the newest pull-request commit whose parent lies on the
target (the first commit of the branch, or the last merge of the target into it), found on the
target's first-parent line. Measured on the SWE-bench Lite rows of the repositories at hand
(docs/collect.md): 89-90% equal, against 70% for the merge-base alone and 36% for the first parent.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from issuebench.collect.history import Commit, Graph, Node, git

MERGE_PR = re.compile(r"^Merge pull request #(\d+)\b")
# The parenthesised group that ends a squash commit's subject: "Title (#N)", and the forms some
# projects write by hand, "Title (PR #N)", "Title (issue #M, PR #N)" (aiostream). Matched in two
# linear steps, the group then its comma-separated parts: a subject is text nobody reviewed.
_LAST_GROUP = re.compile(r"\(([^()]*)\)\s*$")
_PULL_PART = re.compile(r"(?:PR |pull request )?#(\d+)", re.IGNORECASE)


def squash_number(subject: str) -> int | None:
    """The pull-request number a squash commit's subject ends with, or None."""
    group = _LAST_GROUP.search(subject)
    if group is None:
        return None
    for part in group.group(1).split(","):
        match = _PULL_PART.fullmatch(part.strip())
        if match:
            return int(match.group(1))
    return None
_US = "\x1f"
# A pull request whose branch reaches further back than this is walked no further (clock skew
# in old histories can make the newest-first walk wander); the base then falls back.
_WALK_LIMIT = 200_000

PullKind = Literal["merge", "squash", "rebase"]


@dataclass
class Pull:
    number: int
    kind: PullKind
    landing: Commit  # the merge commit, the squash commit, or the newest rebased commit
    target: str  # the target branch just before the pull request landed
    head: str | None = None  # the pull request's own head, when known
    own: list[str] = field(default_factory=list)  # the branch's commits, newest first
    attach: list[str] = field(default_factory=list)  # target commits the branch starts from
    base_commit: str = ""
    diff_from: str = ""  # merge-base of base and head: where the reference's diff starts
    first_author_time: int | None = None
    base_rule: str = "first parent"


def find_pulls(repo_dir: Path, graph: Graph, heads: dict[int, str], main_line: set[str],
               walked: list[str]) -> list[Pull]:
    """Every merged pull request of the graph (walked from `walked`), once per number, newest
    landing first."""
    found: dict[int, list[Pull]] = {}
    for commit in graph.commits:
        if not commit.parents:
            continue
        if commit.is_merge:
            # GitHub's merge button, or a merge whose subject was edited to "Title (#N)".
            match = MERGE_PR.match(commit.subject)
            number = int(match.group(1)) if match else squash_number(commit.subject)
            if number is not None:
                found.setdefault(number, []).append(
                    Pull(number, "merge", commit, commit.parents[0], head=commit.parents[1]))
        elif (number := squash_number(commit.subject)) is not None:
            found.setdefault(number, []).append(Pull(number, "squash", commit, commit.parents[0],
                                                     head=heads.get(number)))
    pulls = [_pick(candidates, heads.get(number), main_line) for number, candidates in found.items()]
    outside = {n: h for n, h in heads.items() if h not in graph.nodes}
    pulls += _rebased(repo_dir, graph, {n: h for n, h in outside.items() if n not in found})
    own_graph = _outside_commits(repo_dir, graph, walked, [p.head for p in pulls
                                                   if p.head and p.head not in graph.nodes])
    for pull in pulls:
        _place(pull, graph, own_graph)
    pulls.sort(key=lambda p: graph.nodes[p.landing.sha].commit_time, reverse=True)
    return pulls


def _pick(candidates: list[Pull], head: str | None, main_line: set[str]) -> Pull:
    """One landing per number: the merge of the pull request's own head, else the one on the
    default branch's main line (backports repeat the subject), else the oldest."""
    for pull in candidates:
        if head and pull.kind == "merge" and pull.head == head:
            return pull
    on_main = [p for p in candidates if p.landing.sha in main_line]
    return (on_main or candidates)[-1]


def _rebased(repo_dir: Path, graph: Graph, heads: dict[int, str]) -> list[Pull]:
    """Pull requests whose head was replayed onto the history ("rebase and merge")."""
    if not heads:
        return []
    index = {(graph.emails[c.sha], graph.nodes[c.sha].author_time, c.subject): c
             for c in graph.commits if not c.is_merge}
    out = git(repo_dir, "log", "--no-walk=unsorted", "--stdin", f"--format=%H{_US}%ae{_US}%at{_US}%s",
              input_text="".join(f"{sha}\n" for sha in set(heads.values())), check=False)
    by_sha: dict[str, tuple[str, int, str]] = {}
    for line in out.splitlines():
        parts = line.split(_US, 3)
        if len(parts) == 4 and parts[2].isdigit():
            by_sha[parts[0]] = (parts[1], int(parts[2]), parts[3])
    pulls = []
    for number, sha in heads.items():
        key = by_sha.get(sha)
        landing = index.get(key) if key else None
        if landing is not None:
            pulls.append(Pull(number, "rebase", landing, landing.parents[0], head=sha))
    return pulls


def _outside_commits(repo_dir: Path, graph: Graph, walked: list[str], heads: list[str]) -> dict[str, Node]:
    """The commits of pull-request heads that the walked history does not hold (squashed or
    rebased branches), in one `git log` stopped at the history."""
    if not heads:
        return {}
    stdin = "".join(f"{h}\n" for h in set(heads)) + "".join(f"^{t}\n" for t in walked)
    out = git(repo_dir, "log", "--stdin", f"--format=%H{_US}%P{_US}%at{_US}%ct", input_text=stdin,
              check=False)
    nodes: dict[str, Node] = {}
    for line in out.splitlines():
        parts = line.split(_US)
        if len(parts) == 4 and parts[0] not in graph.nodes:
            nodes[parts[0]] = Node(tuple(parts[1].split()), int(parts[2]), int(parts[3]))
    return nodes


def _place(pull: Pull, graph: Graph, outside: dict[str, Node]) -> None:
    """The branch's own commits, where it attaches to the target, the offline base estimate."""
    nodes = graph.nodes
    if pull.head and pull.head in outside:
        pull.own, pull.attach = _own_outside(pull.head, outside, nodes)
        if pull.kind == "rebase":  # the replayed run: as many first-parent steps as own commits
            target = pull.landing.sha
            for _ in range(max(1, len(pull.own))):
                parents = nodes[target].parents if target in nodes else ()
                target = parents[0] if parents else target
            pull.target = target
    elif pull.head and pull.head in nodes:
        pull.own, pull.attach = _own_in_graph(pull.head, pull.target, nodes)
    if not pull.own or not pull.attach:
        # No branch to read (a squash without its head): the landing's own parent.
        pull.own, pull.attach = [], []
        pull.base_commit = pull.diff_from = pull.target
        pull.first_author_time = nodes[pull.landing.sha].author_time
        pull.head = None
        return
    def node(sha: str) -> Node:
        return nodes[sha] if sha in nodes else outside[sha]

    own = set(pull.own)
    attach_time = max(node(c).commit_time for c in pull.own if any(p not in own for p in node(c).parents))
    newest_attach = max(pull.attach, key=lambda c: nodes[c].commit_time if c in nodes else 0)
    pull.diff_from = newest_attach
    pull.base_commit = _tip_at(nodes, pull.target, attach_time, set(pull.attach)) or newest_attach
    pull.base_rule = "target tip at the branch's latest attachment"
    pull.first_author_time = min(node(c).author_time for c in pull.own)


def _tip_at(nodes: dict[str, Node], tip: str, when: int, stops: set[str]) -> str | None:
    """The first-parent ancestor of `tip` that was the tip at time `when` (its commit date is
    the first not after it); never older than the branch's attachment."""
    sha: str | None = tip
    for _ in range(_WALK_LIMIT):
        if sha is None or sha not in nodes:
            return None
        if sha in stops or nodes[sha].commit_time <= when:
            return sha
        parents = nodes[sha].parents
        sha = parents[0] if parents else None
    return None


def _own_outside(head: str, outside: dict[str, Node], nodes: dict[str, Node]) -> tuple[list[str], list[str]]:
    own: list[str] = []
    attach: list[str] = []
    stack, seen = [head], {head}
    while stack:
        sha = stack.pop()
        own.append(sha)
        for parent in outside[sha].parents:
            if parent in seen:
                continue
            seen.add(parent)
            if parent in outside:
                stack.append(parent)
            elif parent in nodes:
                attach.append(parent)
    own.sort(key=lambda c: outside[c].commit_time, reverse=True)
    return own, attach


def _own_in_graph(head: str, target: str, nodes: dict[str, Node]) -> tuple[list[str], list[str]]:
    """Commits reachable from head and not from target (git's paint-down walk, newest first by
    commit date), and the target-side parents they hang from."""
    HEAD_SIDE, TARGET_SIDE = 1, 2
    flags = {head: HEAD_SIDE}
    flags[target] = flags.get(target, 0) | TARGET_SIDE
    heap = [(-nodes[head].commit_time, head)]
    if target != head and target in nodes:
        heap.append((-nodes[target].commit_time, target))
    heapq.heapify(heap)
    queued = {head, target}
    head_only_queued = {s for s in queued if flags.get(s) == HEAD_SIDE}
    own: list[str] = []
    steps = 0
    # Names bound locally: this loop is the largest Python cost of finding a big history's pulls.
    pop, push, node_of, flag_of = heapq.heappop, heapq.heappush, nodes.get, flags.get
    while heap and head_only_queued and steps < _WALK_LIMIT:
        steps += 1
        _, sha = pop(heap)
        queued.discard(sha)
        head_only_queued.discard(sha)
        flag = flags[sha]
        if flag == HEAD_SIDE:
            own.append(sha)
        node = node_of(sha)
        for parent in node.parents if node is not None else ():
            parent_node = node_of(parent)
            if parent_node is None:
                continue
            was = flag_of(parent)
            new = (was or 0) | flag
            if new != was:
                flags[parent] = new
                if parent not in queued:
                    queued.add(parent)
                    push(heap, (-parent_node.commit_time, parent))
            if parent in queued:
                if flags[parent] == HEAD_SIDE:
                    head_only_queued.add(parent)
                else:
                    head_only_queued.discard(parent)
    if head_only_queued:
        return [], []  # the walk gave up: no reliable branch
    own_set = set(own)
    attach = list(dict.fromkeys(p for c in own for p in nodes[c].parents if p not in own_set))
    return own, attach
