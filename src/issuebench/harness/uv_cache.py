"""What environment builds leave in uv's cache and no later build reads: removed after a run.

Every build of a source distribution under other settings (another cutoff, other build tools)
unpacks it again and keeps the tree, and a build that fails leaves its tree too: cartopy 0.21.1,
which cannot build here, left some 40 copies of its 16 MiB source (0.6 GiB) over the xarray
environments of one pass. `uv cache prune` removes what no current cache entry points to, and
keeps every wheel the next build can take; a few hundredths of a second when there is nothing.
"""

from __future__ import annotations

import os
import subprocess

from issuebench import config
from issuebench.envs import uv_command

# uv waits for every other uv process on the cache to finish first: not for a long build beside it.
TIMEOUT = 60.0


def prune_uv_cache() -> str:
    """Prune uv's cache (the one the builds used: UV_CACHE_DIR or uv's default); a line saying
    what happened ("" when there was nothing to remove). Never fails the run: a cache that cannot
    be pruned is only larger."""
    if not config.prunes_uv_cache():
        return "uv's cache left as it is (ISSUEBENCH_PRUNE_UV_CACHE=0)"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    try:
        proc = subprocess.run([uv_command(), "cache", "prune"], env=env, capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return f"uv's cache was not pruned: another build kept it in use for {TIMEOUT:.0f}s"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"uv's cache was not pruned: {exc}"
    lines = [line.strip() for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
    if proc.returncode != 0:
        return f"uv's cache was not pruned (exit {proc.returncode}): {lines[-1] if lines else 'no output'}"
    if lines and lines[-1].startswith("No unused entries"):
        return ""
    return f"uv's cache pruned of what no build reads: {lines[-1] if lines else 'done'}"
