"""A compile cache (ccache) for the pristine checkouts' builds of one environment.

Checkouts of one repository version differ in a few files, and each pristine build (a recipe's
pre_test: astropy compiles some 150 C files) compiled them all again: 82 core-seconds at one
astropy 5.1 commit, 9.4 at the next with the cache (docs/benchmarks.md). The cache is kept per
environment, so only builds of the same repository version with the same compiler flags share it,
and only pristine builds (base commits, no patch, no network) ever write to it: a patched run's
rebuild never sees it, so no patch can put an object into another run's build.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from issuebench import config
from issuebench.sandbox import DEFAULT_PATH, Bind

# The names a build calls its compilers by; each is a link to ccache, first on the build's PATH.
COMPILERS = ("gcc", "cc", "g++", "c++", "clang", "clang++")
_HITS = ("direct_cache_hit", "preprocessed_cache_hit")
MISSING = "ccache is not installed: each pristine build compiles everything (apt-get install ccache)"


@dataclass
class CompileCache:
    """What a pristine build's sandbox gets: the cache and the compiler links, and their settings."""

    binds: list[Bind] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    stats_log: Path | None = None
    note: str = ""

    def summary(self) -> str:
        """How many of the build's compiles the cache answered, read from this build's own log."""
        if self.stats_log is None or not self.stats_log.is_file():
            return self.note
        lines = self.stats_log.read_text(encoding="utf-8", errors="replace").splitlines()
        self.stats_log.unlink(missing_ok=True)
        hits = sum(line.strip() in _HITS for line in lines)
        misses = sum(line.strip() == "cache_miss" for line in lines)
        return f"compile cache: {hits} of {hits + misses} compiles reused from earlier builds of this environment"


def compile_cache(env_hash: str, run_env: Mapping[str, str], build: str) -> CompileCache:
    """The cache of environment `env_hash` for one pristine build named `build` (unique per build)."""
    if not config.uses_compile_cache():
        return CompileCache(note="compile cache off (ISSUEBENCH_COMPILE_CACHE=0): the pristine build compiles everything")
    ccache = shutil.which("ccache")
    if ccache is None:
        return CompileCache(note=MISSING)
    root = config.home() / "compile-cache"
    links, cache = root / "bin", root / env_hash
    _link_compilers(links, ccache)
    cache.mkdir(parents=True, exist_ok=True)
    stats_log = cache / f".stats-{build}.log"
    stats_log.unlink(missing_ok=True)
    env = {
        "PATH": f"{links}:{run_env.get('PATH', DEFAULT_PATH)}",
        "CCACHE_DIR": str(cache),
        # Every build runs in the testbed: paths under it are hashed relative, so a file unchanged
        # between two checkouts is a hit, and so is its debug information (-g) without the folder.
        "CCACHE_BASEDIR": config.TESTBED_PATH,
        "CCACHE_NOHASHDIR": "1",
        "CCACHE_STATSLOG": str(stats_log),
    }
    return CompileCache(binds=[Bind(links), Bind(cache, writable=True)], env=env, stats_log=stats_log)


def _link_compilers(links: Path, ccache: str) -> None:
    links.mkdir(parents=True, exist_ok=True)
    for name in COMPILERS:
        link = links / name
        if shutil.which(name) is None:
            continue  # a build that probes for a compiler not installed finds none, as without the cache
        if not link.is_symlink() or os.readlink(link) != ccache:
            tmp = links / f".{name}.{os.getpid()}"
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(ccache)
            os.replace(tmp, link)  # atomic: a build starting beside this one never sees no link
