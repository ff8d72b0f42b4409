"""Bytecode kept in the pristine checkouts against none: warm `eval` of real tasks, same process.

    .venv/bin/python benchmarks/pristine_bytecode.py --dataset TASKS.jsonl --repos CLONES \
        --home HOME --output OUT [--instance-ids ID ...] [--workers 2] [--rounds 2]

Two homes under HOME, `with` and `without` (ISSUEBENCH_PRISTINE_BYTECODE=0), each warmed by a first
gold run that is not counted: it builds the environments and pristine checkouts, and on the `with`
side leaves the bytecode of what the run compiled in them. Then, `--rounds` times, gold with
`--no-cache` runs once per side, in alternating order, so a noisy machine shifts both alike. Each
run is its own `issuebench eval`; the figures are its wall time, its core-seconds (the CPU time of a
cgroup of its own, every process it started and the sandboxed tests included, as the pass script
measures: swebench_pass_measure.py), and from every instance's result.json the sums of the
sandboxed tests' time and of `total`. It prints each run and the ratios with / without.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from swebench_pass_measure import run_measured

SIDES = {"with": "1", "without": "0"}   # ISSUEBENCH_PRISTINE_BYTECODE per side


def run_eval(args: argparse.Namespace, side: str, name: str) -> dict:
    out = args.output / name
    env = {**os.environ, "ISSUEBENCH_HOME": str(args.home / side), "ISSUEBENCH_PRISTINE_BYTECODE": SIDES[side]}
    argv = [str(Path(sys.executable).parent / "issuebench"), "eval", "--dataset", str(args.dataset),
            "--predictions", "gold", "--repos", str(args.repos), "--output", str(out), "--run-id", "r",
            "--workers", str(args.workers), "--no-cache"]
    argv += ["--instance-ids", *args.instance_ids] if args.instance_ids else []
    out.mkdir(parents=True, exist_ok=True)
    usage = run_measured(argv, env=env, log=out / "eval.log")
    if usage.returncode != 0:
        sys.exit(f"{name}: issuebench eval ended {usage.returncode}; see {out / 'eval.log'}")
    results = [json.loads(p.read_text()) for p in out.rglob("result.json")]
    resolved = sum(r.get("status") == "resolved" for r in results)
    total = {key: sum(r.get("durations", {}).get(key, 0.0) for r in results) for key in ("tests", "total")}
    return {"instances": len(results), "resolved": resolved, "wall": usage.wall_seconds, "cpu": usage.cpu_seconds,
            "cpu_source": usage.cpu_source, **total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--instance-ids", nargs="*", default=[])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    for side in SIDES:
        warm = run_eval(args, side, f"warm-up-{side}")
        print(f"warm-up {side:7}: {warm['instances']} instances, {warm['resolved']} resolved (not counted)")
    runs: dict[str, list[dict]] = {side: [] for side in SIDES}
    for round_no in range(args.rounds):
        order = list(SIDES) if round_no % 2 == 0 else list(SIDES)[::-1]
        for side in order:
            figures = run_eval(args, side, f"{side}-{round_no + 1}")
            runs[side].append(figures)
            print(f"round {round_no + 1} {side:7}: {figures['instances']} instances, {figures['resolved']} resolved, "
                  f"wall {figures['wall']:.1f} s, {figures['cpu']:.1f} core-seconds ({figures['cpu_source']}), tests {figures['tests']:.1f} s, "
                  f"total {figures['total']:.1f} s")
    summed = {side: {k: sum(r[k] for r in rs) for k in ("wall", "cpu", "tests", "total")} for side, rs in runs.items()}
    kept, none = summed["with"], summed["without"]
    print(f"with / without over {args.rounds} round(s): wall {kept['wall'] / none['wall']:.3f}, "
          f"core-seconds {kept['cpu'] / none['cpu']:.3f}, tests {kept['tests'] / none['tests']:.3f}, "
          f"total {kept['total'] / none['total']:.3f}")


if __name__ == "__main__":
    main()
