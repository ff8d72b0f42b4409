"""collect(): from a repository's history to candidate task rows (not yet validated)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from issuebench import config
from issuebench.collect import pipeline as P
from issuebench.collect.candidates import (
    changes_tests_and_code,
    counts_as_code,
    split_diff,
    test_predicate,
)
from issuebench.collect.environments import attach_environments
from issuebench.collect.history import batch_diffs, git
from issuebench.collect.landings import Landing, find_landings, from_api
from issuebench.collect.statements import (
    GitHubClient,
    GitHubError,
    Statement,
    fallback_statement,
    linked_issues,
    statement_from_issues,
)
from issuebench.collect.test_change import changes_test_code
from issuebench.collect.versions import assign_versions
from issuebench.errors import InputError, IssuebenchError
from issuebench.models import Task

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - Python 3.10
    pass

_SLUG_FROM_URL = re.compile(r"[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


@dataclass
class CollectOptions:
    since: str | None = None
    until: str | None = None
    max_tasks: int | None = None
    include_commits: bool = False
    test_paths: Sequence[str] = ()
    repo_name: str | None = None
    require_issue: bool = False
    github_api: str | None = None
    recipe: Path | None = None
    # Keep changelogs, news fragments, authors lists and doc pages in the gold patch (the
    # reference leaves them out).
    keep_changelog: bool = False
    # Read `version` per task (one lookup per distinct release, but several git calls each).
    versions: bool = True
    # Build environments per version group with issuebench.setup when no recipe is given.
    run_setup: bool = True
    # Seconds one version group's setup may take (issuebench.setup's time limit; None: its default).
    setup_time_limit: float | None = None
    # A line per stage, per candidate found and per setup step: collect is never silent for long.
    progress: Callable[[str], None] | None = field(default=None, repr=False)


@dataclass
class CollectResult:
    tasks: list[Task]
    table: P.PipelineTable
    repo_dir: Path
    repo_name: str
    # One record per version group set up by issuebench.setup: its outcome and counts.
    setups: list[dict] = field(default_factory=list)


def resolve_repo(repo: str) -> Path:
    """A local clone as is; a URL is cloned (once) into the cache."""
    path = Path(repo).expanduser()
    if path.exists():
        if not (path / ".git").exists() and not (path / "HEAD").exists():
            raise InputError(path, "not a git repository", hint="pass a clone or a repository URL")
        # Absolute, not resolved: a symlink's own name (owner__name) is what names the repository.
        return Path(os.path.abspath(path))
    if "://" not in repo and not repo.startswith("git@"):
        raise InputError(repo, "no such directory, and not a URL",
                         hint="pass a local clone or a URL such as https://host/owner/name")
    match = _SLUG_FROM_URL.search(repo)
    dest = config.repos_cache_dir() / (f"{match.group(1)}__{match.group(2)}" if match else "repo")
    if not (dest / ".git").exists():
        import subprocess
        proc = subprocess.run(["git", "clone", "--quiet", repo, str(dest)], capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise IssuebenchError(f"cannot clone {repo}: {proc.stderr.strip()[:300]}",
                                  hint="check the URL and the network, or pass a local clone")
    return dest


def repo_slug(repo_dir: Path, override: str | None = None) -> str:
    """owner/name from --name, the name recorded in the clone, its origin, or its folder."""
    if override:
        if override.count("/") != 1:
            raise InputError(None, f"repository name {override!r} is not owner/name", field="name")
        return override
    # `repo from-pypi` records the name it chose; a clone knows its origin; a folder named
    # owner__name (the layout --repos DIR uses) says it by its name.
    recorded = git(repo_dir, "config", "--get", "issuebench.repo", check=False).strip()
    if recorded.count("/") == 1:
        return recorded
    url = git(repo_dir, "config", "--get", "remote.origin.url", check=False).strip()
    if url and (match := _SLUG_FROM_URL.search(url)):
        return f"{match.group(1)}/{match.group(2)}"
    owner, sep, name = repo_dir.name.partition("__")
    if sep and owner and name:
        return f"{owner}/{name}"
    return f"local/{repo_dir.name}"


_BATCH = 400  # candidates per `git diff-tree --stdin` process: bounds memory, not speed
_SLICE = 100  # full diffs per process: the first slice of a chunk becomes tasks while git diffs the next
_GIT_WORKERS = 2  # git processes diffing at once (the machines this runs on have 2 cores or more)


def collect(repo: str | Path, options: CollectOptions | None = None) -> CollectResult:
    """In phases: the repository and its name -> the plans (every landed pull request, newest
    first) -> task rows from their diffs (_Miner) -> oldest first, with versions -> environments
    per version group."""
    opts = options or CollectOptions()
    repo_dir = resolve_repo(str(repo))
    miner = _Miner(repo_dir, repo_slug(repo_dir, opts.repo_name), opts)
    say, table = miner.say, miner.table
    if opts.require_issue and miner.client is None:
        say("--require-issue without GITHUB_TOKEN: no issue can be looked up, so every candidate is rejected")
    say(f"reading the history of {miner.name}")
    plans, main_line = find_landings(repo_dir, table, name=miner.name, include_commits=opts.include_commits,
                                     since=opts.since, until=opts.until)
    pulls = sum(1 for p in plans if p.kind != "commit")
    commits = len(plans) - pulls
    say(f"{table.counts['commits scanned']} commits, {pulls} pull requests and {commits} "
        + ("other commits" if opts.include_commits else "commits that name an issue they fix") + " to look at")
    tasks = miner.mine(plans)
    tasks.reverse()  # oldest first, as datasets are usually ordered
    if opts.versions:
        say(f"reading the versions of {len(tasks)} candidates")
        assign_versions(repo_dir, tasks, main_line, repo=miner.name)
    setups = attach_environments(repo_dir, tasks, opts, table)
    return CollectResult(tasks, table, repo_dir, miner.name, setups)


class _Miner:
    """Plans to task rows, newest first, until --max-tasks: file lists first (cheap), full diffs
    only for candidates that change tests and code, then a row with a statement for each."""

    def __init__(self, repo_dir: Path, name: str, opts: CollectOptions) -> None:
        self.repo_dir, self.name, self.opts = repo_dir, name, opts
        self.is_test = test_predicate(opts.test_paths)
        self.client = GitHubClient.from_env(opts.github_api)
        self.say: Callable[[str], None] = opts.progress or (lambda line: None)
        self.table = P.PipelineTable()
        self.tasks: list[Task] = []
        self._pool: ThreadPoolExecutor | None = None

    def enough(self) -> bool:
        return self.opts.max_tasks is not None and len(self.tasks) >= self.opts.max_tasks

    def mine(self, plans: list[Landing]) -> list[Task]:
        chunks = [plans[start:start + _BATCH] for start in range(0, len(plans), _BATCH)]
        # git diffs in worker threads while this one turns earlier diffs into tasks: the next
        # chunk's file lists, this chunk's full diffs in slices. Everything is consumed in order,
        # so the tasks, the counts and where --max-tasks stops are as in a serial run. A pipeline of
        # one job's git reads, not a fan-out of independent items, so not executors.drive: the
        # results are needed in order, and a git that fails is a DIFF_FAILED row, never a Failure.
        self._pool = ThreadPoolExecutor(max_workers=_GIT_WORKERS)
        try:
            next_names = self._diffs_of(chunks[0], names_only=True) if chunks else None
            for index, chunk in enumerate(chunks):
                assert next_names is not None
                names = next_names.result()
                if index + 1 < len(chunks):
                    next_names = self._diffs_of(chunks[index + 1], names_only=True)
                self._rows(self._with_tests(chunk, names))
                if self.enough():
                    break
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
        return self.tasks

    def _diffs_of(self, batch: list[Landing], names_only: bool = False) -> Future[list[str | None]]:
        assert self._pool is not None
        return self._pool.submit(_diffs, self.repo_dir, [(p.diff_from, p.diff_to) for p in batch],
                                 names_only=names_only)

    def _with_tests(self, chunk: list[Landing], names: list[str | None]) -> list[Landing]:
        """The plans whose file lists change tests and code (with the API: its base and date)."""
        kept: list[Landing] = []
        for plan, listing in zip(chunk, names, strict=True):
            self.table.add("candidates")
            if listing is None:
                self.table.reject(P.DIFF_FAILED)
                continue
            files = [line for line in listing.splitlines() if line]
            has_test, has_code = changes_tests_and_code(
                [f for f in files if self.is_test(f) or counts_as_code(f, self.opts.keep_changelog)], self.is_test)
            if not (has_test and has_code):
                self.table.reject(P.NO_TEST_CHANGE if not has_test else P.NO_CODE_CHANGE)
                continue
            self.table.add("with tests")
            if self.client is not None and plan.pr_number is not None:
                from_api(self.repo_dir, self.name, plan, self.client)
            kept.append(plan)
        return kept

    def _rows(self, kept: list[Landing]) -> None:
        """Full diffs in slices (git diffs the next while this thread makes rows), rows until enough."""
        slices = [kept[start:start + _SLICE] for start in range(0, len(kept), _SLICE)]
        for batch, pending in zip(slices, [self._diffs_of(batch) for batch in slices], strict=True):
            for plan, diff in zip(batch, pending.result(), strict=True):
                if diff is None:
                    self.table.reject(P.DIFF_FAILED)
                    continue
                task = _build_task(self.name, plan, diff, self.is_test, self.client, self.opts, self.table)
                if task is None:
                    continue
                self.table.add("with statement")
                self.tasks.append(task)
                self.say(f"candidate {len(self.tasks)}: {task.instance_id} (statement from "
                         f"{task.model_extra.get('problem_source')})")
                if self.enough():
                    return


def _diffs(repo_dir: Path, pairs: list[tuple[str, str]], *, names_only: bool = False) -> list[str | None]:
    """batch_diffs, halving a batch that fails (a clone missing some blobs) down to the pairs
    that cannot be diffed, which get None: one bad candidate never stops a run."""
    try:
        return list(batch_diffs(repo_dir, pairs, names_only=names_only))
    except IssuebenchError:
        if len(pairs) <= 1:
            return [None] * len(pairs)
        half = len(pairs) // 2
        return (_diffs(repo_dir, pairs[:half], names_only=names_only)
                + _diffs(repo_dir, pairs[half:], names_only=names_only))


def _build_task(name: str, plan: Landing, diff: str, is_test, client: GitHubClient | None,
                opts: CollectOptions, table: P.PipelineTable) -> Task | None:
    patch, test_patch = split_diff(diff, is_test, keep_left_out=opts.keep_changelog)
    if not test_patch.strip():
        table.reject(P.NO_TEST_CHANGE)
        return None
    if not patch.strip():
        table.reject(P.NO_CODE_CHANGE)
        return None
    if not changes_test_code(test_patch):
        table.reject(P.COMMENTS_ONLY)
        return None
    statement = _statement(name, plan, client, patch, test_patch)
    if opts.require_issue and statement.problem_source != "issue":
        table.reject(P.API_FAILED if statement.api_error else P.NO_LINKED_ISSUE)
        return None
    table.problem_sources[statement.problem_source] += 1
    return Task(
        instance_id=f"{name.replace('/', '__')}-{plan.label}",
        repo=name,
        base_commit=plan.base_commit,
        patch=patch,
        test_patch=test_patch,
        problem_statement=statement.problem_statement,
        hints_text=statement.hints_text,
        created_at=plan.created_at,
        problem_source=statement.problem_source,
        created_at_source=plan.created_at_source,
        base_commit_source=plan.base_source,
        commit=plan.commit.sha,
        **({"pull_number": plan.pr_number} if plan.pr_number is not None else {}),
        **({"merge_kind": plan.kind} if plan.pr_number is not None else {}),
        **({"issue_numbers": statement.issue_numbers} if statement.issue_numbers else {}),
        **({"api_error": statement.api_error} if statement.api_error else {}),
    )


def _statement(name: str, plan: Landing, client: GitHubClient | None, patch: str,
               test_patch: str) -> Statement:
    message = plan.commit.message
    if client is not None and (plan.kind != "commit" or linked_issues(message, name)):
        texts = [message]
        try:
            pull = plan.pull
            if pull is None and plan.pr_number is not None:
                pull = client.pull(name, plan.pr_number)
            if pull:
                texts.append(f"{pull.get('title') or ''}\n{pull.get('body') or ''}")
            numbers = linked_issues("\n".join(texts), name)
            if numbers:
                stmt = statement_from_issues(client, name, numbers, plan.created_at)
                if stmt is not None:
                    return stmt
        except GitHubError as exc:
            # The API went away mid-run: the message still makes a statement (said on the row).
            stmt = fallback_statement(message, kind="merge", patch=patch, test_patch=test_patch)
            stmt.api_error = str(exc)[:300]
            return stmt
    return fallback_statement(message, kind=plan.kind if plan.kind == "commit" else "merge",
                              patch=patch, test_patch=test_patch)
