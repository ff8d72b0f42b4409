"""uv's cache before and after the prune an eval run ends with, measured on a copy.

    .venv/bin/python benchmarks/uv_cache_prune.py --uv-cache UVCACHE --work SCRATCH

The cache is copied with hard links (cp -al, so the copy costs no disk) and the copy is pruned as
issuebench prunes (harness/uv_cache.py), so the cache itself is left as it is. Both sides are
measured the same way: bytes on disk of the folder, each inode once, by uv's cache folder (sdists:
unpacked source distributions and the wheels built from them; archive: unpacked wheels).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from pathlib import Path

from swebench_pass_measure import disk_use


def usage(cache: Path) -> dict[str, int]:
    parts = sorted(p for p in cache.iterdir() if p.is_dir())
    use = disk_use([(p.name, p, []) for p in parts])
    return {**use.folders, "total": use.total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uv-cache", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    copy = args.work / "uv-cache-copy"
    shutil.rmtree(copy, ignore_errors=True)
    args.work.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-al", str(args.uv_cache), str(copy)], check=True)
    before = usage(copy)
    os.environ["UV_CACHE_DIR"] = str(copy)
    os.environ["ISSUEBENCH_PRUNE_UV_CACHE"] = "1"
    # The copy's lock file is the cache's own inode: a build on the cache would make the prune wait.
    from issuebench.harness import prune_uv_cache

    note = prune_uv_cache()
    after = usage(copy)
    shutil.rmtree(copy, ignore_errors=True)
    print(f"prune: {note or 'nothing to remove'}")
    print("| folder | before MiB | after MiB |")
    print("|---|---:|---:|")
    for name in sorted(set(before) - {"total"}):
        print(f"| {name} | {before[name] / 2**20:.0f} | {after.get(name, 0) / 2**20:.0f} |")
    print(f"| **all** | **{before['total'] / 2**20:.0f}** | **{after['total'] / 2**20:.0f}** |")
    print(f"after/before: {after['total'] / before['total']:.3f}")


if __name__ == "__main__":
    main()
