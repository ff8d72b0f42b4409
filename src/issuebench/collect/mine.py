"""collect(): from a repository's history to candidate task rows (not yet validated)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from issuebench import config
from issuebench.collect import pipeline as P
from issuebench.collect.candidates import (
    Candidate,
    changes_tests_and_code,
    detect_candidate,
    split_diff,
    test_predicate,
)
from issuebench.collect.history import branch_commits_dates, commit_diff, git, walk_history
from issuebench.collect.statements import (
    GitHubClient,
    GitHubError,
    Statement,
    fallback_statement,
    linked_issues,
    statement_from_issues,
)
from issuebench.collect.versions import assign_versions, group_by_version
from issuebench.errors import InputError, IssuebenchError
from issuebench.models import EnvSpec, Task

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

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
    # Build environments per version group with issuebench.setup when no recipe is given.
    run_setup: bool = True
    progress: Callable[[str], None] | None = field(default=None, repr=False)


@dataclass
class CollectResult:
    tasks: list[Task]
    table: P.PipelineTable
    repo_dir: Path
    repo_name: str


def resolve_repo(repo: str) -> Path:
    """A local clone as is; a URL is cloned (once) into the cache."""
    path = Path(repo).expanduser()
    if path.exists():
        if not (path / ".git").exists() and not (path / "HEAD").exists():
            raise InputError(path, "not a git repository", hint="pass a clone or a repository URL")
        return path.resolve()
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


def load_recipe(path: Path) -> EnvSpec:
    """An EnvSpec from a TOML file: its keys at top level, or under an [env] table."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(path, f"cannot read recipe: {exc}") from exc
    data = data.get("env", data)
    try:
        return EnvSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(path, err["msg"], field=".".join(str(p) for p in err["loc"]),
                         hint="see EnvSpec in docs/architecture.md for the recipe fields") from exc


def utc_iso(date: str) -> str:
    """git's ISO dates carry offsets; rows use UTC with Z, like the reference."""
    return datetime.fromisoformat(date).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect(repo: str | Path, options: CollectOptions | None = None) -> CollectResult:
    opts = options or CollectOptions()
    repo_dir = resolve_repo(str(repo))
    name = repo_slug(repo_dir, opts.repo_name)
    is_test = test_predicate(opts.test_paths)
    client = GitHubClient.from_env(opts.github_api)
    table = P.PipelineTable()
    tasks: list[Task] = []
    for commit in walk_history(repo_dir, since=opts.since, until=opts.until):
        table.add("commits scanned")
        candidate = detect_candidate(commit, include_commits=opts.include_commits)
        if candidate is None:
            continue
        table.add("candidates")
        has_test, has_code = changes_tests_and_code(commit.files, is_test)
        if not (has_test and has_code):
            table.reject(P.NO_TEST_CHANGE if not has_test else P.NO_CODE_CHANGE)
            continue
        table.add("with tests")
        task = _build_task(repo_dir, name, candidate, is_test, client, opts.require_issue, table)
        if task is None:
            continue
        table.add("with statement")
        tasks.append(task)
        if opts.progress:
            opts.progress(task.instance_id)
        if opts.max_tasks is not None and len(tasks) >= opts.max_tasks:
            break
    tasks.reverse()  # oldest first, as datasets are usually ordered
    assign_versions(repo_dir, tasks)
    _attach_environments(repo_dir, tasks, opts, table)
    return CollectResult(tasks, table, repo_dir, name)


def _build_task(repo_dir: Path, name: str, cand: Candidate, is_test, client: GitHubClient | None,
                require_issue: bool, table: P.PipelineTable) -> Task | None:
    diff = commit_diff(repo_dir, cand.base_commit, cand.commit.sha)
    patch, test_patch = split_diff(diff, is_test)
    if not test_patch.strip():
        table.reject(P.NO_TEST_CHANGE)
        return None
    if not patch.strip():
        table.reject(P.NO_CODE_CHANGE)
        return None
    statement = _statement(repo_dir, name, cand, client, patch, test_patch)
    if require_issue and statement.problem_source != "issue":
        table.reject(P.NO_LINKED_ISSUE)
        return None
    table.problem_sources[statement.problem_source] += 1
    return Task(
        instance_id=f"{name.replace('/', '__')}-{cand.label}",
        repo=name,
        base_commit=cand.base_commit,
        patch=patch,
        test_patch=test_patch,
        problem_statement=statement.problem_statement,
        hints_text=statement.hints_text,
        created_at=utc_iso(cand.commit.author_date),
        problem_source=statement.problem_source,
        commit=cand.commit.sha,
        **({"pull_number": cand.pr_number} if cand.pr_number is not None else {}),
        **({"issue_numbers": statement.issue_numbers} if statement.issue_numbers else {}),
    )


def _statement(repo_dir: Path, name: str, cand: Candidate, client: GitHubClient | None,
               patch: str, test_patch: str) -> Statement:
    message = cand.commit.message
    if client is not None and cand.kind != "commit":
        texts = [message]
        try:
            pull = client.pull(name, cand.pr_number) if cand.pr_number is not None else None
            if pull:
                texts.append(f"{pull.get('title') or ''}\n{pull.get('body') or ''}")
            numbers = linked_issues("\n".join(texts), name)
            if numbers:
                stmt = statement_from_issues(client, name, numbers, _first_commit_date(repo_dir, cand))
                if stmt is not None:
                    return stmt
        except GitHubError:
            pass  # the API went away mid-run: the message still makes a statement
    return fallback_statement(message, kind=cand.kind, patch=patch, test_patch=test_patch)


def _first_commit_date(repo_dir: Path, cand: Candidate) -> str:
    if cand.kind == "merge":
        dates = branch_commits_dates(repo_dir, cand.base_commit, cand.commit.parents[1])
        if dates:
            return dates[0]
    return cand.commit.author_date


def _attach_environments(repo_dir: Path, tasks: list[Task], opts: CollectOptions,
                         table: P.PipelineTable) -> None:
    """One environment per version group: the row's own, a --recipe, or issuebench.setup."""
    recipe = load_recipe(opts.recipe) if opts.recipe else None
    for group in group_by_version(tasks).values():
        spec = recipe or next((t.env for t in group if t.env is not None), None)
        if spec is None and opts.run_setup:
            spec = _setup_group(repo_dir, group[0])
        for task in group:
            if task.env is None and spec is not None:
                task.env = spec
            if task.env is not None:
                table.add("set up")


def _setup_group(repo_dir: Path, task: Task) -> EnvSpec | None:
    """Ask issuebench.setup for a spec at the group's environment commit, when it is installed."""
    try:
        from issuebench.setup import setup_repository  # type: ignore[attr-defined]
    except ImportError:
        return None
    try:
        result = setup_repository(repo_dir, commit=task.environment_setup_commit,
                                  date=task.created_at, repo_name=task.repo)
    except Exception:  # a group that cannot be set up stays without env; validate says why
        return None
    spec = getattr(result, "spec", result)
    return spec if isinstance(spec, EnvSpec) else None
