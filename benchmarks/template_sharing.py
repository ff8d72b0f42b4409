"""Pristine checkouts with their alike files shared against each holding its own: disk and time.

    .venv/bin/python benchmarks/template_sharing.py --dataset TASKS.jsonl [--dataset ...] \
        --repos CLONES --work SCRATCH [--repo owner/name ...] [--max 40]

For the base commits of the rows (of the named repositories, at most --max per repository), it
makes every pristine checkout twice in one process, each side in a new home under SCRATCH: once as
eval makes them (files shared through the content store) and once with the sharing turned off.
The sides alternate repository by repository, so a noisy machine shifts both alike. It prints per
repository and in all the checkouts' bytes on disk (each inode once) and the seconds spent, and
the ratios shared / own.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from collections import defaultdict
from pathlib import Path

from issuebench.harness import workspace


def rows(datasets: list[Path], repos: set[str], most: int) -> dict[str, list[str]]:
    commits: dict[str, list[str]] = defaultdict(list)
    for dataset in datasets:
        for line in dataset.read_text().splitlines():
            row = json.loads(line) if line.strip() else None
            if not row or (repos and row["repo"] not in repos):
                continue
            kept = commits[row["repo"]]
            if row["base_commit"] not in kept and len(kept) < most:
                kept.append(row["base_commit"])
    return dict(commits)


def disk_bytes(folder: Path) -> int:
    seen: set[int] = set()
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            info = os.lstat(os.path.join(root, name))
            if info.st_ino not in seen:
                seen.add(info.st_ino)
                total += info.st_blocks * 512
    return total


def one_side(side: str, repo: str, source: Path, commits: list[str], work: Path) -> tuple[int, float]:
    home = work / f"{side}-{repo.replace('/', '__')}"
    shutil.rmtree(home, ignore_errors=True)
    os.environ["ISSUEBENCH_HOME"] = str(home)
    share = workspace.share_files
    if side == "own":
        workspace.share_files = lambda _checkout, _store: 0  # type: ignore[assignment]
    try:
        start = time.monotonic()
        for commit in commits:
            workspace._template(source, commit, repo)
        seconds = time.monotonic() - start
    finally:
        workspace.share_files = share  # type: ignore[assignment]
    size = disk_bytes(home / "templates")
    shutil.rmtree(home, ignore_errors=True)
    return size, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, action="append", required=True)
    parser.add_argument("--repos", type=Path, required=True, help="folder of clones named owner__name")
    parser.add_argument("--work", type=Path, required=True, help="scratch folder for the two homes")
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--max", type=int, default=40, help="base commits per repository")
    args = parser.parse_args()
    workspace.MAX_TEMPLATES = 10**6  # every checkout kept: the figure is what they take together
    totals = {"shared": [0, 0.0], "own": [0, 0.0]}
    print(f"{'repository':32} {'checkouts':>9} {'own GiB':>8} {'shared GiB':>10} {'disk':>6} {'time':>6}")
    for turn, (repo, commits) in enumerate(sorted(rows(args.dataset, set(args.repo), args.max).items())):
        source = args.repos / repo.replace("/", "__")
        if not source.is_dir():
            print(f"{repo:32} skipped: no clone at {source}")
            continue
        order = ("shared", "own") if turn % 2 == 0 else ("own", "shared")
        got = {side: one_side(side, repo, source, commits, args.work) for side in order}
        for side, (size, seconds) in got.items():
            totals[side][0] += size
            totals[side][1] += seconds
        (own, own_s), (shared, shared_s) = got["own"], got["shared"]
        print(f"{repo:32} {len(commits):9} {own / 2**30:8.2f} {shared / 2**30:10.2f} {shared / own:6.3f} "
              f"{shared_s / own_s:6.3f}")
    (own, own_s), (shared, shared_s) = totals["own"], totals["shared"]
    print(f"{'all':32} {'':9} {own / 2**30:8.2f} {shared / 2**30:10.2f} {shared / own:6.3f} {shared_s / own_s:6.3f}")
    print("disk: bytes on disk shared / own (each inode once); time: seconds making the checkouts, shared / own")


if __name__ == "__main__":
    main()
