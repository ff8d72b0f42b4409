"""synth on a real project: yield per generator, kept tasks per hour, covering-test validation
against full-suite validation on the same candidates, and eval of the kept tasks.

1. `synthesize` with --limit/--workers (or read the yield.json of a run already made in DIR):
   the yield table and kept tasks per hour of wall-clock time.
2. In the same process, the first --compare candidates of a fresh plan (same generators, a new
   seed so they are new candidates) are each validated in one workbench, one worker: covering
   tests on the warm worker (what synth does), the whole suite per candidate with a plain
   sandboxed pytest per run (what SWE-smith does; same protocol and flags) and, with --cold,
   covering tests as synth validated them before the warm worker (a plain run each, tracebacks
   printed in both runs), which must give the same verdict, FAIL_TO_PASS and PASS_TO_PASS (and
   is checked for the same issue text, object addresses masked); with --suite-before, the whole suite as validated
   before too. Printed: the ratios of total validation seconds, and whether the ways keep the
   same ones.
3. With --eval: `issuebench eval` of DIR/tasks.jsonl with the gold patches and with a no-op
   patch (adds a text file): every kept task must be resolved by gold and by nothing else.

    .venv/bin/python benchmarks/synth_yield.py SRC --recipe R.toml --output DIR \\
        [--limit 300] [--workers 2] [--compare 30] [--cold] [--suite-before] [--eval]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

NOOP = ("diff --git a/SYNTH_NOOP.txt b/SYNTH_NOOP.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
        "--- /dev/null\n+++ b/SYNTH_NOOP.txt\n@@ -0,0 +1 @@\n+no change\n")


def run_synth(args: argparse.Namespace) -> dict:
    from issuebench.synth import SynthOptions, synthesize

    if (args.output / "yield.json").exists() and not args.rerun:
        return json.loads((args.output / "yield.json").read_text())
    opts = SynthOptions(output=args.output, recipe=args.recipe, limit=args.limit, workers=args.workers,
                        name=args.name, seed=args.seed)
    return synthesize(args.src, opts, progress=lambda line: None).summary


def issue(result, changed: set[str]) -> str:
    """The issue text, object addresses masked (`<lambda at 0x7f...>` differs between any two runs)."""
    from issuebench.synth.issue_text import write_issue

    # pytest's shortened reprs may keep only the tail of one (`<test_dict...x7f69cf2cfe00>`).
    return re.sub(r"0?x[0-9a-f]{6,}", "0x?", write_issue(result.FAIL_TO_PASS, result.output, changed))


def compare(args: argparse.Namespace) -> dict:
    """Covering tests against the whole suite, candidate by candidate, in one workbench."""
    from issuebench.synth.pipeline import plan, prepare
    from issuebench.synth.run import SynthOptions
    from issuebench.synth.validate import check

    work = args.output.parent / (args.output.name + "-compare")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copy(args.output / "baseline.json", work / "baseline.json")  # the same map, not remade
    opts = SynthOptions(output=work, recipe=args.recipe, name=args.name, seed=args.seed + 1,
                        generators=[g for g in (args.generators or "").split(",") if g] or None)
    prepared = prepare(args.src, opts)
    singles = [g for g in prepared.generators if g.phase == "single"]
    try:
        cands = plan(prepared.run, singles, prepared.ctx, [args.compare * 3])[: args.compare]
        bench = prepared.run.bench()
        rows = []
        for cand in cands:
            def way(scope: str, warm: bool, fast: bool = True, cand=cand):
                bench.warm = warm
                return check(bench, cand, prepared.cmap, prepared.base, timeout=prepared.timeout, scope=scope,
                             fast=fast)

            cov = way("covering", True)
            row = {"id": cand.id, "generator": cand.generator, "covering": cov.status,
                   "covering_seconds": round(cov.seconds, 2), "covering_f2p": len(cov.FAIL_TO_PASS)}
            line = f"  {cand.generator:14} warm {cov.status:14} {cov.seconds:6.1f}s | "
            if args.cold:
                cold = way("covering", False, False)  # covering validation as it was before
                changed = {c.path for c in cand.changes}
                row.update(cold=cold.status, cold_seconds=round(cold.seconds, 2),
                           identical=(cov.status, cov.FAIL_TO_PASS, cov.PASS_TO_PASS)
                           == (cold.status, cold.FAIL_TO_PASS, cold.PASS_TO_PASS),
                           same_issue=not cov.FAIL_TO_PASS
                           or (bool(cold.FAIL_TO_PASS) and issue(cov, changed) == issue(cold, changed)))
                line += (f"cold {cold.status:14} {cold.seconds:6.1f}s {'same' if row['identical'] else 'DIFFERENT'}"
                         f"{'' if row['same_issue'] else ' (issue text differs)'} | ")
            full = way("suite", False)
            row.update(suite=full.status, suite_seconds=round(full.seconds, 2), suite_f2p=len(full.FAIL_TO_PASS))
            line += f"suite {full.status:14} {full.seconds:6.1f}s"
            if args.suite_before:
                before = way("suite", False, False)
                row.update(suite_before=before.status, suite_before_seconds=round(before.seconds, 2))
                line += f" | suite as before {before.status:14} {before.seconds:6.1f}s"
            rows.append(row)
            print(line, flush=True)
        workers_started = bench.warm_starts
    finally:
        prepared.run.close()
    cov_s = sum(r["covering_seconds"] for r in rows)
    suite_s = sum(r["suite_seconds"] for r in rows)
    same = sum((r["covering"] == "kept") == (r["suite"] == "kept") for r in rows)
    out = {"candidates": len(rows), "covering_seconds": round(cov_s, 1), "suite_seconds": round(suite_s, 1),
           "speedup": round(suite_s / cov_s, 2) if cov_s else None, "same_verdict": same,
           "kept_covering": sum(r["covering"] == "kept" for r in rows),
           "kept_suite": sum(r["suite"] == "kept" for r in rows), "warm_workers_started": workers_started,
           "rows": rows}
    if args.suite_before:
        before_s = sum(r["suite_before_seconds"] for r in rows)
        out.update(suite_before_seconds=round(before_s, 1),
                   speedup_over_suite_before=round(before_s / cov_s, 2) if cov_s else None)
    if args.cold:
        cold_s = sum(r["cold_seconds"] for r in rows)
        out.update(cold_seconds=round(cold_s, 1), cold_speedup=round(suite_s / cold_s, 2) if cold_s else None,
                   warm_over_cold=round(cold_s / cov_s, 2) if cov_s else None,
                   identical=sum(r["identical"] for r in rows), same_issue=sum(r["same_issue"] for r in rows))
    return out


def evaluate(args: argparse.Namespace) -> dict:
    dataset = args.output / "tasks.jsonl"
    rows = [json.loads(line) for line in dataset.read_text().splitlines() if line.strip()]
    preds = args.output / "noop-predictions.jsonl"
    preds.write_text("".join(json.dumps({"instance_id": r["instance_id"], "model_name_or_path": "noop",
                                         "model_patch": NOOP}) + "\n" for r in rows))
    cli = [str(Path(sys.executable).parent / "issuebench")]
    out = {}
    for name, predictions in (("gold", "gold"), ("noop", str(preds))):
        started = time.monotonic()
        subprocess.run([*cli, "eval", "-d", str(dataset), "-p", predictions, "--repos", str(args.output / "repos"),
                        "-o", str(args.output / "eval"), "--run-id", name, "-w", str(args.workers)],
                       capture_output=True, text=True, check=False)
        summary = json.loads(next((args.output / "eval").glob(f"*.{name}.json")).read_text())
        out[name] = {"resolved": summary["resolved_instances"], "total": len(rows),
                     "errors": len(summary.get("error_ids", [])), "seconds": round(time.monotonic() - started, 1)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src", type=Path)
    ap.add_argument("--recipe", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--name", default=None)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compare", type=int, default=30, help="candidates validated both ways (0: skip)")
    ap.add_argument("--generators", default=None, help="for the comparison (default: all single ones)")
    ap.add_argument("--suite-before", action="store_true", help="also validate with the whole suite as "
                    "before the warm worker (tracebacks printed in both runs)")
    ap.add_argument("--cold", action="store_true", help="also validate covering tests with a plain run per "
                    "pytest call (no warm worker) and check the results are identical")
    ap.add_argument("--eval", action="store_true")
    ap.add_argument("--rerun", action="store_true", help="run synth even if DIR/yield.json exists")
    ap.add_argument("--only", default="synth,compare,eval", help="steps to do (the comparison needs "
                    "DIR/baseline.json, which synth writes first)")
    args = ap.parse_args()
    args.output = args.output.resolve()

    steps = set(args.only.split(","))
    report: dict = {}
    if "synth" in steps:
        report["synth"] = synth = run_synth(args)
        total = synth["generators"].get("total", {})
        print(f"{synth['repo']}: {synth['kept']} kept of {total.get('candidates', 0)} candidates in "
              f"{synth['seconds']:.0f}s ({synth['kept_per_hour']} kept/hour, {synth['workers']} workers)")
        for gen, counts in synth["generators"].items():
            share = counts["kept"] / counts["candidates"] if counts["candidates"] else 0
            print(f"  {gen:14} {counts['kept']:4}/{counts['candidates']:<4} kept ({share:.0%})")
    if args.compare and "compare" in steps:
        report["compare"] = cmp = compare(args)
        print(f"validation of {cmp['candidates']} candidates: covering (warm) {cmp['covering_seconds']}s, "
              f"whole suite {cmp['suite_seconds']}s -> {cmp['speedup']}x; same verdict "
              f"{cmp['same_verdict']}/{cmp['candidates']} (kept {cmp['kept_covering']} vs {cmp['kept_suite']})")
        if args.suite_before:
            print(f"whole suite as validated before {cmp['suite_before_seconds']}s -> "
                  f"{cmp['speedup_over_suite_before']}x")
        if args.cold:
            print(f"covering (cold) {cmp['cold_seconds']}s -> {cmp['cold_speedup']}x against the whole suite; "
                  f"warm is {cmp['warm_over_cold']}x faster than cold; identical status, FAIL_TO_PASS and "
                  f"PASS_TO_PASS {cmp['identical']}/{cmp['candidates']}, same issue text {cmp['same_issue']}/{cmp['candidates']}")
    if args.eval and "eval" in steps:
        report["eval"] = ev = evaluate(args)
        print(f"eval: gold resolves {ev['gold']['resolved']}/{ev['gold']['total']}, "
              f"no-op resolves {ev['noop']['resolved']}/{ev['noop']['total']}")
    path = args.output / "benchmark.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**previous, **report}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
