"""The same eval through the local pool and through Ray on this machine, and 1 -> 2 workers.

    .venv/bin/python benchmarks/ray_overhead.py [--instances 50] [--sleep 1] [--workers 2]

Instances are the demo's tasks repeated under new ids, each test run starting with `sleep N`, so an
instance lasts N seconds or more (the issue's target concerns instances of 1 s or more). Every run
has its own run id and no result cache, so every instance really runs. Environments are built once
before timing (Ray's workers on this machine share the same environment cache).

Prints, measured in this one process:
- ray / local at the same number of workers (target <= 1.1 for instances of 1 s or more);
- per-instance overhead of Ray: (ray - local) * workers / instances;
- 1 -> 2 workers speed-up, for the local pool and for Ray;
- Ray's start-up (a local instance for the run), reported apart: it is paid once per run.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from issuebench.datasets import gold_predictions
from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.executors import get_executor
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.models import InstanceStatus


def make_tasks(n: int, sleep: float) -> list:
    base = demo_tasks()
    tasks = []
    for i in range(n):
        t = base[i % len(base)]
        env = t.env.model_copy(update={"pre_test": [f"sleep {sleep:g}"]})
        tasks.append(t.model_copy(update={"instance_id": f"{t.instance_id}-x{i}", "env": env}))
    return tasks


def timed(tasks, out: Path, run_id: str, workers: int, executor=None) -> float:
    ctx = build_context(EvalOptions(output_dir=out, run_id=run_id, repos_dir=demo_repos_dir(),
                                    python_fallback="nearest", timeout=300, use_cache=False))
    t0 = time.monotonic()
    result = run_evaluation(tasks, gold_predictions(tasks), ctx, workers=workers, executor=executor)
    seconds = time.monotonic() - t0
    bad = [r.instance_id for r in result.reports if r.status is not InstanceStatus.RESOLVED]
    assert not bad and len(result.reports) == len(tasks), f"{run_id}: not resolved: {bad[:5]}"
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", type=int, default=50)
    ap.add_argument("--sleep", type=float, default=1.0, help="seconds each test run waits first")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-scaling", action="store_true", help="skip the 1-worker runs")
    args = ap.parse_args()
    tasks = make_tasks(args.instances, args.sleep)
    out = Path(tempfile.mkdtemp(prefix="ray-overhead-"))
    timed(tasks[:3], out, "warm", 1)  # builds the environments outside the timed runs

    w = args.workers
    rows: list[tuple[str, float]] = []
    local = timed(tasks, out, "local-w", w)
    rows.append((f"local pool, {w} workers", local))
    t0 = time.monotonic()
    ray_ex = get_executor("ray", None, w)  # starts a Ray instance on this machine
    startup = time.monotonic() - t0
    try:
        timed(tasks[:w], out, "ray-warm", w, ray_ex)  # Ray's worker processes start and import
        ray_t = timed(tasks, out, "ray-w", w, ray_ex)
        rows.append((f"ray, {w} workers", ray_t))
        if not args.no_scaling:
            ray_1 = timed(tasks, out, "ray-1", 1, get_executor("ray", None, 1))  # same instance, 1 in flight
            rows.append(("ray, 1 worker", ray_1))
    finally:
        ray_ex.close()
    if not args.no_scaling:
        local_1 = timed(tasks, out, "local-1", 1)
        rows.append(("local pool, 1 worker", local_1))

    print(f"{args.instances} instances, each test run preceded by sleep {args.sleep:g} s")
    for name, seconds in rows:
        print(f"  {name:24s} {seconds:7.2f} s   {seconds / args.instances:6.3f} s per instance")
    print(f"ray / local ({w} workers):        {ray_t / local:.3f}")
    print(f"ray overhead per instance:         {(ray_t - local) * w / args.instances * 1000:.0f} ms")
    print(f"ray start-up (once per run):       {startup:.1f} s")
    if not args.no_scaling:
        print(f"local 1 -> {w} workers speed-up:    {local_1 / local:.2f}x")
        print(f"ray   1 -> {w} workers speed-up:    {ray_1 / ray_t:.2f}x")


if __name__ == "__main__":
    main()
