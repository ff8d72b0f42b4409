"""Environment cost: cold build vs warm reuse, and disk of N envs sharing packages vs their sum.

    python benchmarks/env_build.py [--envs 4] [--python 3.11]

Builds N environments that share most packages (numpy, pytest) and differ in one pin, in a fresh
ISSUEBENCH_HOME, through EnvBuilder (uv venv + uv pip install, hard links from uv's cache). Prints:
  - cold build (uv's package cache already warm, env not built) vs warm reuse (ensure() on a built
    env): the ratio is what the content-addressed cache saves per instance;
  - real disk used by the N envs (each inode once) vs the sum of their apparent sizes: the ratio
    is what hard links from the shared uv cache save.
Needs the package index the first time (to fill uv's cache).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

VARYING = ["six==1.14.0", "six==1.15.0", "six==1.16.0", "six==1.13.0", "six==1.12.0", "six==1.11.0"]
SHARED = ["numpy==1.26.4", "pytest==7.4.4"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--python", default="3.11")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="issuebench-bench-") as tmp:
        os.environ["ISSUEBENCH_HOME"] = str(Path(tmp) / "home")
        from issuebench.envs import EnvBuilder, cache
        from issuebench.models import EnvSpec

        ws = Path(tmp) / "ws"
        ws.mkdir()
        specs = [EnvSpec(python=args.python, seed_pip=False, packages=[*SHARED, VARYING[i % len(VARYING)]],
                         install=[] if i < len(VARYING) else [f"# variant {i}"])
                 for i in range(args.envs)]
        # Fill uv's cache once (network), then measure builds against a warm package cache.
        warmup = EnvBuilder(cache_dir=Path(tmp) / "warmup", python_fallback="nearest")
        for spec in specs:
            warmup.ensure(spec, ws)
        builder = EnvBuilder(python_fallback="nearest")
        cold, warm = [], []
        envs = []
        for spec in specs:
            t0 = time.perf_counter()
            envs.append(builder.ensure(spec, ws))
            cold.append(time.perf_counter() - t0)
            for _ in range(5):
                t0 = time.perf_counter()
                builder.ensure(spec, ws)
                warm.append(time.perf_counter() - t0)
        root = envs[0].path.parent
        real = cache.real_disk_usage([e.path for e in envs])
        apparent = sum(cache.apparent_size(e.path) for e in envs)
        print(f"python {envs[0].python_version}, {len(envs)} envs of {', '.join(SHARED)} + one varying pin")
        print(f"cold build (uv cache warm): median {statistics.median(cold):.3f} s")
        print(f"warm reuse (already built): median {statistics.median(warm) * 1000:.2f} ms")
        print(f"ratio cold/warm:            {statistics.median(cold) / statistics.median(warm):.0f}x")
        print(f"disk, real (hard links once): {real / 1e6:.1f} MB")
        print(f"disk, sum of apparent sizes:  {apparent / 1e6:.1f} MB")
        print(f"ratio apparent/real:          {apparent / real:.2f}x")
        print(f"(envs in {root}; uv cache shared, link mode {os.environ.get('UV_LINK_MODE', 'hardlink')})")


if __name__ == "__main__":
    main()
