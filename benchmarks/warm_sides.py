"""What the same-process A/B scripts of warm `eval` share (workspace_location.py, pristine_bytecode.py):
their arguments, the gold `--no-cache` eval each run is, and the alternating order of the sides."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def parse_arguments(description: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--instance-ids", nargs="*", default=[])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    return ap.parse_args()


def gold_eval_argv(args: argparse.Namespace, out: Path) -> list[str]:
    """`issuebench eval` of gold on the tasks, every instance run again (`--no-cache`), into `out`."""
    argv = [str(Path(sys.executable).parent / "issuebench"), "eval", "--dataset", str(args.dataset),
            "--predictions", "gold", "--repos", str(args.repos), "--output", str(out), "--run-id", "r",
            "--workers", str(args.workers), "--no-cache"]
    return argv + (["--instance-ids", *args.instance_ids] if args.instance_ids else [])


def alternate(sides: Sequence[str], rounds: int, run: Callable[[str, int], dict]) -> dict[str, list[dict]]:
    """`run(side, round)` for every side, `rounds` times, the order reversed every other round so a
    noisy machine shifts both sides alike; each side's figures in round order."""
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for round_no in range(1, rounds + 1):
        for side in (sides if round_no % 2 else list(sides)[::-1]):
            runs[side].append(run(side, round_no))
    return runs
