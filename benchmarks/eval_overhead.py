"""Harness overhead: `eval` on the demo (warm environments) against running the same tests directly.

    .venv/bin/python benchmarks/eval_overhead.py [--rounds 3]

Prints ratios measured in this one process, so a noisy machine shifts both sides alike:
- eval (1 worker) / direct: everything the harness adds (workspace, patching, sandbox, parsing,
  artifacts) over the bare test commands run one after another in a prepared checkout;
- eval (2 workers) / direct: the same with the default parallelism of a 2-core machine;
- cached rerun / first run: a finished run evaluated again. Each round's first run starts from an
  empty shared result cache (its key holds no run id, so an earlier round's run would serve it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from issuebench import config
from issuebench.datasets import gold_predictions
from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.harness import EvalOptions, build_context, commands, run_evaluation
from issuebench.harness.overlay import ensure_env_with_overlay
from issuebench.harness.workspace import create_workspace, git
from issuebench.patch import apply_patch


def prepared_checkouts(tasks, root: Path):
    """One checkout per task with gold and test patch applied, built outside the timed part."""
    out = []
    for task in tasks:
        src = demo_repos_dir() / task.repo.replace("/", "__")
        ws = create_workspace(src, task.base_commit, root)
        apply_patch(ws, task.patch)
        apply_patch(ws, task.test_patch)
        out.append((task, ws))
    return out


def time_direct(checkouts, ctx) -> float:
    """Run each task's test command with the environment's interpreter, no harness, no sandbox."""
    total = 0.0
    for task, ws in checkouts:
        spec = task.env
        env = ensure_env_with_overlay(ctx.env_builder, spec, ws)
        run_env = {**os.environ, **env.run_env()}
        cmd = commands.test_command(spec, task.test_patch)
        # Each eval instance starts from a fresh tree, so its modules compile once: the direct run
        # starts without bytecode too, or the comparison would flatter it.
        for cache in ws.rglob("__pycache__"):
            shutil.rmtree(cache)
        t0 = time.perf_counter()
        subprocess.run(["bash", "-c", cmd], cwd=ws, env=run_env, capture_output=True, check=False)
        total += time.perf_counter() - t0
    return total


def time_eval(tasks, out: Path, run_id: str, workers: int, use_cache: bool) -> float:
    ctx = build_context(EvalOptions(output_dir=out, run_id=run_id, repos_dir=demo_repos_dir(),
                                    use_cache=use_cache, timeout=300))
    t0 = time.perf_counter()
    result = run_evaluation(tasks, gold_predictions(tasks), ctx, workers=workers)
    elapsed = time.perf_counter() - t0
    bad = [r.instance_id for r in result.reports if r.status.value != "resolved"]
    if bad:
        raise SystemExit(f"gold did not resolve: {bad}")
    return elapsed


def first_and_rerun(tasks, out: Path) -> tuple[float, float]:
    """Seconds of a first run (nothing cached, environments warm) and of the same run again."""
    shutil.rmtree(config.results_cache_dir(), ignore_errors=True)
    first = time_eval(tasks, out, "c", 2, use_cache=True)
    return first, time_eval(tasks, out, "c", 2, use_cache=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("ISSUEBENCH_HOME", tempfile.mkdtemp(prefix="ib-bench-"))
    tasks = demo_tasks()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        time_eval(tasks, tmp_path / "warm", "warm", 2, use_cache=False)  # builds the environments
        ctx = build_context(EvalOptions(output_dir=tmp_path / "d", run_id="d", repos_dir=demo_repos_dir()))
        checkouts = prepared_checkouts(tasks, tmp_path / "checkouts")
        direct, eval1, eval2, rerun = [], [], [], []
        for i in range(args.rounds):
            direct.append(time_direct(checkouts, ctx))
            eval1.append(time_eval(tasks, tmp_path / f"e1-{i}", "e1", 1, use_cache=False))
            eval2.append(time_eval(tasks, tmp_path / f"e2-{i}", "e2", 2, use_cache=False))
            first, again = first_and_rerun(tasks, tmp_path / f"c-{i}")
            rerun.append(again / first)
        for _, ws in checkouts:
            git(ws, "status")  # checkouts stay valid throughout
        d, e1, e2 = statistics.median(direct), statistics.median(eval1), statistics.median(eval2)
        print(f"demo: {len(tasks)} tasks, {args.rounds} rounds (medians)")
        print(f"direct test commands, sequential: {d:.2f}s")
        print(f"eval, 1 worker:                   {e1:.2f}s  ratio {e1 / d:.2f}")
        print(f"eval, 2 workers:                  {e2:.2f}s  ratio {e2 / d:.2f}")
        print(f"cached rerun / first run:         ratio {statistics.median(rerun):.3f}")


if __name__ == "__main__":
    main()
