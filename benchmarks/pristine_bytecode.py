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

from swebench_pass_measure import run_measured
from warm_sides import alternate, gold_eval_argv, parse_arguments

SIDES = {"with": "1", "without": "0"}   # ISSUEBENCH_PRISTINE_BYTECODE per side


def run_eval(args: argparse.Namespace, side: str, name: str) -> dict:
    out = args.output / name
    env = {**os.environ, "ISSUEBENCH_HOME": str(args.home / side), "ISSUEBENCH_PRISTINE_BYTECODE": SIDES[side]}
    out.mkdir(parents=True, exist_ok=True)
    usage = run_measured(gold_eval_argv(args, out), env=env, log=out / "eval.log")
    if usage.returncode != 0:
        sys.exit(f"{name}: issuebench eval ended {usage.returncode}; see {out / 'eval.log'}")
    results = [json.loads(p.read_text()) for p in out.rglob("result.json")]
    resolved = sum(r.get("status") == "resolved" for r in results)
    total = {key: sum(r.get("durations", {}).get(key, 0.0) for r in results) for key in ("tests", "total")}
    return {"instances": len(results), "resolved": resolved, "wall": usage.wall_seconds, "cpu": usage.cpu_seconds,
            "cpu_source": usage.cpu_source, **total}


def main() -> None:
    args = parse_arguments(__doc__.splitlines()[0])
    for side in SIDES:
        warm = run_eval(args, side, f"warm-up-{side}")
        print(f"warm-up {side:7}: {warm['instances']} instances, {warm['resolved']} resolved (not counted)")

    def one(side: str, round_no: int) -> dict:
        figures = run_eval(args, side, f"{side}-{round_no}")
        print(f"round {round_no} {side:7}: {figures['instances']} instances, {figures['resolved']} resolved, "
              f"wall {figures['wall']:.1f} s, {figures['cpu']:.1f} core-seconds ({figures['cpu_source']}), "
              f"tests {figures['tests']:.1f} s, total {figures['total']:.1f} s")
        return figures

    runs = alternate(list(SIDES), args.rounds, one)
    summed = {side: {k: sum(r[k] for r in rs) for k in ("wall", "cpu", "tests", "total")} for side, rs in runs.items()}
    kept, none = summed["with"], summed["without"]
    print(f"with / without over {args.rounds} round(s): wall {kept['wall'] / none['wall']:.3f}, "
          f"core-seconds {kept['cpu'] / none['cpu']:.3f}, tests {kept['tests'] / none['tests']:.3f}, "
          f"total {kept['total'] / none['total']:.3f}")


if __name__ == "__main__":
    main()
