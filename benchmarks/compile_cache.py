"""Pristine builds with the compile cache against without it, on real rows, in one process.

    .venv/bin/python benchmarks/compile_cache.py --dataset swe-bench-lite-test.jsonl \
        --dataset swe-bench-verified-test.jsonl --repos CLONES --home HOME --work SCRATCH

The environments step of benchmarks/swebench_pass.py (workspace, environment, pristine checkout,
the recipe's pre_test build, no test run) over every row of one repository whose recipe builds
before its tests (astropy by default), twice in one `ISSUEBENCH_HOME` whose environments are
already built: once with `ISSUEBENCH_COMPILE_CACHE=0`, once with an empty cache. Before each side
the pristine checkouts, their build products, instance layers and the cache are removed, so both sides make every
checkout and build it. Prints each side's core-seconds (the eval process and all it started) and
the pristine builds' own seconds, the cache's hits, and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from pathlib import Path

from swebench_pass import NO_APPLY_PATCH
from swebench_pass_measure import run_measured, source_commit

SIDES = (("without the cache", "0"), ("with the cache", "1"))
_REUSED = re.compile(r"compile cache: (\d+) of (\d+) compiles reused")


def rows(datasets: list[Path], repo: str) -> list[dict]:
    seen: dict[str, dict] = {}
    for path in datasets:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else None
            if row and row["repo"] == repo:
                seen.setdefault(row["instance_id"], row)
    return list(seen.values())


def side(args: argparse.Namespace, name: str, switch: str, tasks: Path, preds: Path) -> dict:
    for stale in ("templates", "compile-cache", "results", "work", "envs/layers"):
        shutil.rmtree(args.home / stale, ignore_errors=True)
    out = args.work / f"side-{switch}"
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "ISSUEBENCH_HOME": str(args.home), "ISSUEBENCH_COMPILE_CACHE": switch}
    argv = [str(Path(sys.executable).parent / "issuebench"), "eval", "--dataset", str(tasks), "--predictions",
            str(preds), "--repos", str(args.repos), "--output", str(out), "--run-id", "envs", "--workers",
            str(args.workers)]
    usage = run_measured(argv, env=env, log=args.work / f"side-{switch}.log")
    prebuild, hits, compiles, built = 0.0, 0, 0, 0
    for path in out.glob("logs/run_evaluation/envs/*/*/result.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        seconds = data.get("durations", {}).get("prebuild", 0.0)
        prebuild += seconds
        built += seconds > 0
        for note in data.get("notes", []):
            if m := _REUSED.search(note):
                hits, compiles = hits + int(m[1]), compiles + int(m[2])
    return {"side": name, "core_seconds": usage.cpu_seconds, "wall_seconds": usage.wall_seconds,
            "prebuild_seconds": prebuild, "builds": built, "hits": hits, "compiles": compiles}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, action="append", required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--home", type=Path, required=True, help="an ISSUEBENCH_HOME with the environments built")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--repo", default="astropy/astropy")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    chosen = rows(args.dataset, args.repo)
    tasks, preds = args.work / "tasks.jsonl", args.work / "predictions.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    preds.write_text("".join(json.dumps({"instance_id": r["instance_id"], "model_name_or_path": "envs-only",
                                         "model_patch": NO_APPLY_PATCH}) + "\n" for r in chosen), encoding="utf-8")
    source = source_commit(Path(__file__).resolve().parent.parent)
    print(f"commit {source['commit'][:12]}{'' if source['clean'] else ' (with uncommitted changes)'}: {len(chosen)} rows of {args.repo}, "
          f"{len({r['version'] for r in chosen})} versions, {args.workers} workers")
    results = [side(args, name, switch, tasks, preds) for name, switch in SIDES]
    print("| side | core-s | wall s | pristine builds | their seconds | compiles reused |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['side']} | {r['core_seconds']:.0f} | {r['wall_seconds']:.0f} | {r['builds']} | "
              f"{r['prebuild_seconds']:.0f} | {r['hits']} of {r['compiles']} |")
    off, on = results
    print(f"with/without: core-seconds {on['core_seconds'] / off['core_seconds']:.3f}, "
          f"pristine builds' seconds {on['prebuild_seconds'] / max(off['prebuild_seconds'], 1e-9):.3f}")


if __name__ == "__main__":
    main()
