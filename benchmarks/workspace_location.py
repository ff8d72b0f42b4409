"""Workspaces on a memory filesystem against the home's disk: `eval` of real tasks, same process.

    .venv/bin/python benchmarks/workspace_location.py --dataset TASKS.jsonl --repos CLONES \
        --home HOME --output OUT [--instance-ids ID ...] [--workers 2] [--rounds 2]

A first gold run (not counted) builds or finds the environments in HOME. Then, `--rounds` times,
gold with `--no-cache` runs twice, once with workspaces in the home (`ISSUEBENCH_WORKSPACES=home`)
and once where issuebench puts them by default (a memory filesystem when one has room), in
alternating order, so a noisy machine shifts both sides alike. Each run is its own `issuebench
eval`; the figures are its wall time and, from every instance's result.json, the sums of the
`workspace` phase (finding the repository and the recipe, copying the pristine checkout), of the
sandboxed tests and of the whole (`total`). It prints each run and the ratios memory / home.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time

from warm_sides import alternate, gold_eval_argv, parse_arguments

from issuebench import config

SIDES = {"home": "home", "memory": ""}   # ISSUEBENCH_WORKSPACES per side ("": the default choice)


def run_eval(args: argparse.Namespace, name: str, workspaces: str | None) -> dict:
    out = args.output / name
    env = {**os.environ, "ISSUEBENCH_HOME": str(args.home)}
    env.pop("ISSUEBENCH_WORKSPACES", None)
    if workspaces:
        env["ISSUEBENCH_WORKSPACES"] = workspaces
    argv = gold_eval_argv(args, out)
    start = time.monotonic()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - start
    durations = [json.loads(p.read_text()).get("durations", {}) for p in out.rglob("result.json")]
    total = {key: sum(d.get(key, 0.0) for d in durations) for key in ("workspace", "tests", "total")}
    return {"instances": len(durations), "wall": wall, **total}


def main() -> None:
    args = parse_arguments(__doc__.splitlines()[0])
    os.environ["ISSUEBENCH_HOME"] = str(args.home)
    os.environ.pop("ISSUEBENCH_WORKSPACES", None)
    print(f"default workspaces folder here: {'memory filesystem' if config.MEMORY_FS in config.workspaces_dir().parents else 'the home'}")
    run_eval(args, "warm-up", "home")

    def one(side: str, round_no: int) -> dict:
        figures = run_eval(args, f"{side}-{round_no}", SIDES[side])
        print(f"round {round_no} {side:6}: {figures['instances']} instances, wall {figures['wall']:.1f} s, "
              f"workspace {figures['workspace']:.1f} s, tests {figures['tests']:.1f} s, "
              f"total {figures['total']:.1f} s, total/tests {figures['total'] / figures['tests']:.3f}")
        return figures

    runs = alternate(list(SIDES), args.rounds, one)
    summed = {side: {k: sum(r[k] for r in rs) for k in ("wall", "workspace", "tests", "total")}
              for side, rs in runs.items()}
    mem, disk = summed["memory"], summed["home"]
    print(f"memory / home over {args.rounds} round(s): wall {mem['wall'] / disk['wall']:.3f}, "
          f"workspace phase {mem['workspace'] / disk['workspace']:.3f}, tests {mem['tests'] / disk['tests']:.3f}; "
          f"eval over tests {mem['total'] / mem['tests']:.3f} (memory) against {disk['total'] / disk['tests']:.3f} (home)")


if __name__ == "__main__":
    main()
