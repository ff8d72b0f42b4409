"""synth on a real project: yield per generator, kept tasks per hour, covering-test validation
against full-suite validation on the same candidates, and eval of the kept tasks.

1. `synthesize` with --limit/--workers (or read the yield.json of a run already made in DIR):
   the yield table and kept tasks per hour of wall-clock time.
2. In the same process, the first --compare candidates of a fresh plan (same generators, a new
   seed so they are new candidates) are each validated in one workbench, one after the other,
   the same protocol and flags every way. The covering-test speed-up compares sides that run on
   the same worker: covering tests against the whole suite (every passing test, given by id) on
   the warm worker (what synth does); with --cold, the same two on plain runs (a sandboxed pytest
   per run, no warm worker: the whole suite as SWE-smith runs it), so cold is compared with cold
   too, and the warm worker's own gain is printed apart, as is the mixed ratio (the whole suite
   on plain runs against covering tests on the warm worker, which holds both effects). With
   --cold the covering runs must give the same verdict, FAIL_TO_PASS and PASS_TO_PASS warm and
   plain, and the same issue text (object addresses masked); with --suite-before, the whole
   suite as validated before the warm worker (tracebacks printed in both runs) is timed too.
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
from dataclasses import dataclass
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


class WholeSuite:
    """A coverage map under which every passing test covers every line.

    Covering tests under it are the whole passing suite, given by id, which the warm worker can
    run: a run of the suite command itself (no ids) always goes the plain way, so without this
    the whole suite could only be timed on plain runs."""

    def tests_for(self, path: str, first: int, last: int, all_tests: set[str] | None = None) -> set[str]:
        return set(all_tests or ())


@dataclass(frozen=True)
class Way:
    name: str
    title: str
    whole_suite: bool
    warm: bool
    fast: bool = True   # False: the protocol before the warm worker (tracebacks in both runs)


COVERING_WARM = Way("covering_warm", "covering tests, warm worker (what synth does)", False, True)
SUITE_WARM = Way("suite_warm", "whole suite, warm worker", True, True)
COVERING_PLAIN = Way("covering_plain", "covering tests, plain runs", False, False)
SUITE_PLAIN = Way("suite_plain", "whole suite, plain runs (as SWE-smith runs it)", True, False)
SUITE_BEFORE = Way("suite_before", "whole suite, plain runs, as validated before (tracebacks)", True, False,
                   fast=False)


def ways(cold: bool, suite_before: bool) -> list[Way]:
    return [COVERING_WARM, SUITE_WARM, *([COVERING_PLAIN, SUITE_PLAIN] if cold else []),
            *([SUITE_BEFORE] if suite_before else [])]


# (label, numerator, denominator): seconds of one way over another's. The covering-test speed-ups
# compare ways on the same worker; the warm worker's gain compares the same tests.
RATIOS = (
    ("covering-test speed-up, warm worker on both sides", SUITE_WARM, COVERING_WARM),
    ("covering-test speed-up, plain runs on both sides (cold against cold)", SUITE_PLAIN, COVERING_PLAIN),
    ("warm worker's gain on covering tests", COVERING_PLAIN, COVERING_WARM),
    ("warm worker's gain on the whole suite", SUITE_PLAIN, SUITE_WARM),
    ("mixed: whole suite on plain runs over covering tests on the warm worker (both effects)",
     SUITE_PLAIN, COVERING_WARM),
    ("mixed: whole suite as validated before over covering tests on the warm worker", SUITE_BEFORE, COVERING_WARM),
)


def ratios(seconds: dict[str, float]) -> dict[str, float]:
    """The ratios whose two ways were both timed."""
    return {label: round(seconds[num.name] / seconds[den.name], 2) for label, num, den in RATIOS
            if num.name in seconds and den.name in seconds and seconds[den.name]}


def totals(rows: list[dict], names: list[str], *, skip_timeouts: bool = False) -> dict[str, float]:
    """Seconds per way, summed over the candidates (with skip_timeouts, over those no way timed out
    on: a timeout costs what its limit says, which differs between a covering run and the suite)."""
    kept = [r for r in rows if not (skip_timeouts and any(r[n] == "timeout" for n in names))]
    return {n: round(sum(r[f"{n}_seconds"] for r in kept), 1) for n in names}


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
    chosen = ways(args.cold, args.suite_before)
    try:
        cands = plan(prepared.run, singles, prepared.ctx, [args.compare * 3])[: args.compare]
        bench = prepared.run.bench()
        rows = []
        for cand in cands:
            row: dict = {"id": cand.id, "generator": cand.generator}
            outcomes = {}
            line = f"  {cand.generator:14}"
            for way in chosen:
                bench.warm = way.warm
                # The whole suite goes to the warm worker by id; plain, it is the suite command itself.
                scope = "suite" if way.whole_suite and not way.warm else "covering"
                cmap = WholeSuite() if way.whole_suite else prepared.cmap
                got = check(bench, cand, cmap, prepared.base, timeout=prepared.timeout, scope=scope,
                            fast=way.fast)
                outcomes[way.name] = got
                row[way.name] = got.status
                row[f"{way.name}_seconds"] = round(got.seconds, 2)
                row[f"{way.name}_f2p"] = len(got.FAIL_TO_PASS)
                line += f" | {way.name} {got.status:13} {got.seconds:6.1f}s"
            if args.cold:
                warm, plain = outcomes[COVERING_WARM.name], outcomes[COVERING_PLAIN.name]
                changed = {c.path for c in cand.changes}
                row.update(identical=(warm.status, warm.FAIL_TO_PASS, warm.PASS_TO_PASS)
                           == (plain.status, plain.FAIL_TO_PASS, plain.PASS_TO_PASS),
                           same_issue=not warm.FAIL_TO_PASS
                           or (bool(plain.FAIL_TO_PASS) and issue(warm, changed) == issue(plain, changed)))
                line += f" | {'same' if row['identical'] else 'DIFFERENT'}"
                line += "" if row["same_issue"] else " (issue text differs)"
            rows.append(row)
            print(line, flush=True)
        workers_started = bench.warm_starts
    finally:
        prepared.run.close()
    names = [way.name for way in chosen]
    seconds, steady = totals(rows, names), totals(rows, names, skip_timeouts=True)
    kept = {way.name: sum(r[way.name] == "kept" for r in rows) for way in chosen}
    out = {"candidates": len(rows), "seconds": seconds, "kept": kept, "ratios": ratios(seconds),
           "without_timeouts": {"candidates": sum(not any(r[n] == "timeout" for n in names) for r in rows),
                                "seconds": steady, "ratios": ratios(steady)},
           "titles": {way.name: way.title for way in chosen},
           "same_verdict_warm": sum((r[COVERING_WARM.name] == "kept") == (r[SUITE_WARM.name] == "kept")
                                    for r in rows),
           "warm_workers_started": workers_started, "rows": rows}
    if args.cold:
        out.update(same_verdict_plain=sum((r[COVERING_PLAIN.name] == "kept") == (r[SUITE_PLAIN.name] == "kept")
                                          for r in rows),
                   identical=sum(r["identical"] for r in rows), same_issue=sum(r["same_issue"] for r in rows))
    return out


def print_compare(cmp: dict) -> None:
    n = cmp["candidates"]
    print(f"validation of {n} candidates, one workbench, the same protocol every way (seconds, summed):")
    for name, total in cmp["seconds"].items():
        print(f"  {cmp['titles'][name]:62} {total:8.1f} s, kept {cmp['kept'][name]}")
    for label, value in cmp["ratios"].items():
        print(f"  {label}: {value}x")
    steady = cmp["without_timeouts"]
    print(f"  over the {steady['candidates']} candidates no way timed out on: "
          + ", ".join(f"{name} {total} s" for name, total in steady["seconds"].items()))
    for label, value in steady["ratios"].items():
        print(f"    {label}: {value}x")
    print(f"  same verdict, covering vs whole suite on the warm worker: {cmp['same_verdict_warm']}/{n}")
    if "identical" in cmp:
        print(f"  same verdict, covering vs whole suite on plain runs: {cmp['same_verdict_plain']}/{n}; "
              f"covering tests warm vs plain: identical status, FAIL_TO_PASS and PASS_TO_PASS "
              f"{cmp['identical']}/{n}, same issue text {cmp['same_issue']}/{n}")


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
    ap.add_argument("--cold", action="store_true", help="also validate covering tests and the whole suite with "
                    "a plain run per pytest call (no warm worker): cold against cold, and the covering results "
                    "checked identical warm and plain")
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
        print_compare(cmp)
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
