"""Which release a task belongs to, and the commit its environment is built from.

Like the reference: `version` is "major.minor" of the release the base commit belongs to, and
tasks of one version share an environment built at `environment_setup_commit`, the newest base
commit of the group; set-up therefore runs once per group.
Sources, in order (issuebench.repos.version_rule): the version file of the package named after
the repository, static setup metadata, the nearest version-like tag.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from issuebench.collect.history import git
from issuebench.models import Task
from issuebench.repos import ObjectReader, find_version, find_versions

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?")
_DUNDER = re.compile(r"""^__version__\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""", re.MULTILINE)
_SETUP_VERSION = re.compile(r"""^\s*version\s*=\s*['"]?([0-9][^'"\s,]*)""", re.MULTILINE)
_SETUP_PY_VERSION = re.compile(r"""\bversion\s*=\s*['"]([0-9][^'"]*)['"]""")


def major_minor(text: str) -> str | None:
    match = _VERSION.search(text)
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


def version_at(repo_dir: Path, commit: str) -> str | None:
    # The rule lives in version_rule (the package's own version file, metadata, then the tag),
    # measured on Lite rows; the eval harness uses it for rows without a version.

    found = find_version(repo_dir, commit)
    return found.version if found else None


def _version_from_files(repo_dir: Path, commit: str) -> str | None:
    # One `git grep` over the tree of the commit, not a checkout.
    out = git(repo_dir, "grep", "-h", "-E", r"^__version__\s*(:\s*str\s*)?=", commit, "--",
              "*.py", check=False)
    if (match := _DUNDER.search(out)) and (version := major_minor(match.group(1))):
        return version
    for name, pattern in (("pyproject.toml", _SETUP_VERSION), ("setup.cfg", _SETUP_VERSION),
                          ("setup.py", _SETUP_PY_VERSION)):
        text = git(repo_dir, "show", f"{commit}:{name}", check=False)
        if (match := pattern.search(text)) and (version := major_minor(match.group(1))):
            return version
    return None


def assign_versions(repo_dir: Path, tasks: Iterable[Task], main_line: list[str] | None = None,
                    repo: str | None = None) -> list[Task]:
    """Fill `version` (kept when the row has one) and `environment_setup_commit` per group.

    With `main_line` (the default branch's first-parent commits, newest first), the bases on it
    are read by bisection: a version only moves forward along the main line, so when both ends
    of a stretch say the same release every base between does too. A whole history then costs
    a few lookups per release instead of one per task; bases off the main line (maintenance
    branches) are each read. `repo` ("owner/name") names the package whose version file is read
    first (the clone's folder may be named anything). Lookups go in batches (each bisection step's midpoints, then every
    base off the main line) through one reader, so git runs a few times per step, not per file.
    """

    tasks = list(tasks)
    cache: dict[str, str | None] = {}
    with ObjectReader(repo_dir) as reader:
        def lookup(shas: list[str]) -> dict[str, str | None]:
            found = find_versions(repo_dir, shas, repo, reader=reader)
            return {sha: f.version if f else None for sha, f in found.items()}

        if main_line:
            wanted = {t.base_commit for t in tasks if not t.version}
            ordered = [sha for sha in reversed(main_line) if sha in wanted]  # oldest first
            _bisect(ordered, cache, lookup)
        cache.update(lookup([t.base_commit for t in tasks if not t.version and t.base_commit not in cache]))
    for task in tasks:
        if not task.version:
            task.version = cache[task.base_commit] or "0.0"
    for group in group_by_version(tasks).values():
        newest = max(group, key=lambda t: (t.created_at or "", t.base_commit))
        for task in group:
            task.environment_setup_commit = task.environment_setup_commit or newest.base_commit
    return tasks


def _bisect(shas: list[str], out: dict[str, str | None],
            lookup: Callable[[list[str]], dict[str, str | None]]) -> None:
    """Versions of `shas` (oldest first) into `out`, looking up both ends and, level by level,
    the midpoint of every stretch whose ends differ; `lookup` answers a level at once. Each
    stretch depends only on its own ends, so the answer is the depth-first one."""
    if not shas:
        return
    out.update(lookup([sha for sha in dict.fromkeys((shas[0], shas[-1])) if sha not in out]))
    level = [(0, len(shas) - 1)]
    while level:
        mids: list[str] = []
        below: list[tuple[int, int]] = []
        for lo, hi in level:
            if hi - lo <= 1:
                continue
            if out[shas[lo]] == out[shas[hi]]:
                for i in range(lo + 1, hi):
                    out[shas[i]] = out[shas[lo]]
                continue
            mid = (lo + hi) // 2
            mids.append(shas[mid])
            below += [(lo, mid), (mid, hi)]
        if mids:
            out.update(lookup(mids))
        level = below


def group_by_version(tasks: Iterable[Task]) -> dict[tuple[str, str], list[Task]]:
    groups: dict[tuple[str, str], list[Task]] = defaultdict(list)
    for task in tasks:
        groups[(task.repo, task.version or "0.0")].append(task)
    return dict(groups)
