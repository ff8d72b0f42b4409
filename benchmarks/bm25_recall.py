"""BM25 retrieval on SWE-bench Lite rows whose repositories are at hand: how often the files the
gold patch edits are among the top k, and what fits in a 27,000-token prompt.

For each row: build (or load) the bm25s index of the repository at the base commit, rank files by
the problem statement, and compare the ranking with the oracle files (non-test files the gold
patch edits). Printed: recall at k = 1, 3, 5 (mean share of oracle files in the top k), "any" and
"all" at k, and the same for the files that fit `infer`'s 27K-token prompt (README included).
Timing, in the same process: the first retrieval of a commit (index built) against a second one
(index loaded from the cache); the ratio is what the cache buys a rerun.

    .venv/bin/python benchmarks/bm25_recall.py --repos DIR_OF_CLONES DATA.jsonl [DATA.jsonl ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

KS = (1, 3, 5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="+", type=Path, help="Lite rows (.jsonl)")
    ap.add_argument("--repos", type=Path, required=True, help="folder of clones: DIR/owner__name")
    ap.add_argument("--limit", type=int, default=0, help="at most this many rows (0: all)")
    ap.add_argument("--context-tokens", type=int, default=27_000)
    args = ap.parse_args()
    # A fresh cache, so the first retrieval of each commit really builds its index.
    os.environ.setdefault("ISSUEBENCH_HOME", tempfile.mkdtemp(prefix="bm25-bench-"))

    from issuebench.datasets import load_tasks
    from issuebench.infer.retrieval import BM25Retriever, oracle_paths
    from issuebench.infer.run import InferConfig, make_prompt
    from issuebench.repos.find import candidate_paths

    rows, skipped = [], Counter()
    for path in args.data:
        for task in load_tasks(path):
            clone = next((p for p in candidate_paths(args.repos, task.repo) if p.is_dir()), None)
            if clone is None:
                skipped[task.repo] += 1
                continue
            rows.append((task, clone))
    if args.limit:
        rows = rows[: args.limit]
    retriever, cfg = BM25Retriever(), InferConfig(context_tokens=args.context_tokens)
    recall: dict[int, list[float]] = defaultdict(list)
    any_hit: dict[int, int] = Counter()
    all_hit: dict[int, int] = Counter()
    budget = {"recall": [], "any": 0, "all": 0, "files": []}
    per_repo: dict[str, list[float]] = defaultdict(list)
    build_s, cached_s, non_py, failed = [], [], 0, []
    started = time.monotonic()
    for n, (task, clone) in enumerate(rows, 1):
        gold = set(oracle_paths(task))
        if not gold:
            continue
        non_py += sum(1 for p in gold if not p.endswith(".py"))
        try:
            t0 = time.monotonic()
            hits = [h.path for h in retriever.retrieve(task, clone, max(KS))]
            build_s.append(time.monotonic() - t0)
            t0 = time.monotonic()
            retriever.retrieve(task, clone, max(KS))
            cached_s.append(time.monotonic() - t0)
            prompt = make_prompt(task, clone, cfg)
        except Exception as exc:  # a commit a snapshot cannot serve: reported, not fatal
            failed.append(f"{task.instance_id}: {type(exc).__name__}: {exc}"[:160])
            continue
        for k in KS:
            found = len(gold & set(hits[:k]))
            recall[k].append(found / len(gold))
            any_hit[k] += found > 0
            all_hit[k] += found == len(gold)
        in_prompt = gold & set(prompt.files)
        budget["recall"].append(len(in_prompt) / len(gold))
        budget["any"] += bool(in_prompt)
        budget["all"] += in_prompt == gold
        budget["files"].append(len(prompt.files))
        per_repo[task.repo].append(len(gold & set(hits[:5])) / len(gold))
        if n % 25 == 0:
            print(f"  {n}/{len(rows)} rows, {time.monotonic() - started:.0f}s", file=sys.stderr, flush=True)
    total = len(recall[1])
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    print(f"rows with a clone at hand: {len(rows)} (scored {total}; failed {len(failed)}); "
          f"skipped for want of a clone: {sum(skipped.values())} ({', '.join(f'{r} {c}' for r, c in skipped.most_common())})")
    print(f"oracle files that are not Python (BM25 indexes .py files only): {non_py}")
    print("| k | recall (mean share of oracle files) | any oracle file | all oracle files |")
    print("|---|---|---|---|")
    for k in KS:
        print(f"| {k} | {pct(statistics.mean(recall[k]))} | {pct(any_hit[k] / total)} | {pct(all_hit[k] / total)} |")
    print(f"| {args.context_tokens // 1000}K-token prompt (mean {statistics.mean(budget['files']):.1f} files) | "
          f"{pct(statistics.mean(budget['recall']))} | {pct(budget['any'] / total)} | {pct(budget['all'] / total)} |")
    print("per repository, recall at 5: " + ", ".join(
        f"{r} {pct(statistics.mean(v))} (n={len(v)})" for r, v in sorted(per_repo.items())))
    print(f"retrieval with the index built: median {statistics.median(build_s):.2f}s; from the cache: "
          f"median {statistics.median(cached_s):.3f}s; ratio {statistics.median(build_s) / statistics.median(cached_s):.0f}")
    for line in failed[:10]:
        print("failed:", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
