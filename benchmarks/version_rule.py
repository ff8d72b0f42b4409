#!/usr/bin/env python
"""How often a task's version read from its repository equals the row's own `version`.

    python benchmarks/version_rule.py --repos CLONES ROWS.jsonl [ROWS.jsonl ...] [-v]

For every row whose repository is among the clones (CLONES/owner__name), four rules are compared
with the row's `version`, per repository: the nearest tag first (issuebench before this rule),
files only (`__version__` anywhere in the tree, then setup metadata), the rule now used
(issuebench.repos.version_rule: the package's own version file, static metadata, the nearest
version-like tag), and that rule mapped onto the packaged recipe's versions as eval does for a
row without version (issuebench.harness.task_version). -v lists every row the mapped rule misses.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from issuebench.collect.history import git
from issuebench.collect.versions import _version_from_files
from issuebench.harness.task_version import with_repository_version
from issuebench.models import Task
from issuebench.repos.version_rule import find_version, major_minor

RULES = ("tag first", "files only", "rule", "rule+recipe")


def tag_first(clone: Path, commit: str) -> str | None:
    tag = git(clone, "describe", "--tags", "--abbrev=0", commit, check=False).strip()
    return (major_minor(tag) if tag else None) or _version_from_files(clone, commit)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", type=Path, nargs="+")
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for path in args.rows:
        for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
            clone = args.repos / row["repo"].replace("/", "__")
            if not clone.exists():
                continue
            base, want = row["base_commit"], row["version"]
            found = find_version(clone, base, row["repo"])
            task = Task(instance_id=row["instance_id"], repo=row["repo"], base_commit=base)
            mapped, note = with_repository_version(task, clone)
            got = {"tag first": tag_first(clone, base), "files only": _version_from_files(clone, base),
                   "rule": found.version if found else None, "rule+recipe": mapped.version}
            c = counts[row["repo"]]
            c["rows"] += 1
            for rule in RULES:
                c[rule] += int(got[rule] == want)
            if args.verbose and mapped.version != want:
                print(f"{row['instance_id']}: row {want}, {note}")
    print(f"{'repository':30} {'rows':>4} " + " ".join(f"{r:>11}" for r in RULES))
    total: dict[str, int] = defaultdict(int)
    for repo, c in sorted(counts.items()):
        for k, v in c.items():
            total[k] += v
        print(f"{repo:30} {c['rows']:4} " + " ".join(f"{c[r]:11}" for r in RULES))
    print(f"{'all':30} {total['rows']:4} " + " ".join(f"{total[r]:11}" for r in RULES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
