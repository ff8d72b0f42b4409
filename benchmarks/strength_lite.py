#!/usr/bin/env python
"""Test strength of SWE-bench Lite tasks whose repositories are at hand.

    python benchmarks/strength_lite.py LITE.jsonl --repos CLONES --out DIR
        [--repos-list sympy/sympy,pytest-dev/pytest] [--per-repo 5] [--offset 0] [--mutants 6]
        [--timeout 600] [--workers 1]

Takes the first --per-repo tasks (by instance id) of each listed repository whose clone is in
CLONES, round-robin over repositories so a stopped run still covers each, and runs
`audit --test-strength`'s measurement on them (the gold patch must resolve the task in this
harness first). Writes OUT/strength.json after every task and prints the distribution.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import zip_longest
from pathlib import Path

from issuebench.datasets import load_tasks
from issuebench.strength import strength_report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--repos-list", default="sympy/sympy,pytest-dev/pytest,mwaskom/seaborn,pylint-dev/pylint,"
                                            "pallets/flask")
    ap.add_argument("--per-repo", type=int, default=5)
    ap.add_argument("--offset", type=int, default=0, help="skip this many tasks of each repository first")
    ap.add_argument("--mutants", type=int, default=6)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    tasks = load_tasks(args.dataset)
    queues = []
    for repo in [r for r in args.repos_list.split(",") if r]:
        if not (args.repos / repo.replace("/", "__")).exists():
            print(f"{repo}: no clone at hand, left out")
            continue
        queues.append(sorted((t for t in tasks if t.repo == repo), key=lambda t: t.instance_id)[args.offset:args.offset + args.per_repo])
    chosen = [t for group in zip_longest(*queues) for t in group if t is not None]
    print(f"{len(chosen)} task(s), at most {args.mutants} mutants each", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    done = []
    start = time.monotonic()

    def on_result(res) -> None:
        done.append(res)
        (args.out / "strength.json").write_text(strength_report.strength_json(done))
        what = (f"{res.killed}/{len(res.mutants)} killed" if res.strength is not None
                else f"{res.status}: {res.reason[:200]}")
        print(f"[{time.monotonic() - start:6.0f}s] {res.instance_id}: {what}", flush=True)

    results = strength_report.run_test_strength(chosen, output_dir=args.out, repos_dir=args.repos,
                                                timeout=args.timeout, mutants=args.mutants, workers=args.workers,
                                                python_fallback="nearest", on_result=on_result)
    print()
    print(strength_report.strength_text(results))
    print(json.dumps(strength_report.distribution(results)))
    print(f"elapsed {time.monotonic() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
