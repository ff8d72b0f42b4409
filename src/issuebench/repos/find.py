"""Find the source repository of a task: a local folder of clones, or a cached clone of its URL."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from issuebench import config
from issuebench.demo import DEMO_OWNER, demo_bundles, demo_repos_dir
from issuebench.errors import IssuebenchError


def _is_git_repo(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def candidate_paths(repos_dir: Path, repo: str) -> list[Path]:
    owner, _, name = repo.partition("/")
    return [repos_dir / repo.replace("/", "__"), repos_dir / owner / name, repos_dir / name]


def find_repo(repo: str, repos_dir: Path | None, *, allow_clone: bool = True) -> Path:
    """Return a local git repository holding `repo` ("owner/name").

    Looks in repos_dir (DIR/owner__name, DIR/owner/name or DIR/name), then in the clone cache,
    then clones https://github.com/owner/name into the cache when allowed.
    """
    searched: list[Path] = []
    for base in [repos_dir, config.repos_cache_dir()]:
        if base is None:
            continue
        for path in candidate_paths(Path(base), repo):
            searched.append(path)
            if path.is_dir() and _is_git_repo(path):
                return path
    demo = _demo_clone(repo)
    if demo is not None:
        return demo
    if not allow_clone:
        raise IssuebenchError(f"no local clone of {repo} (looked in {', '.join(map(str, searched[:3]))})",
                              hint="pass --repos DIR holding DIR/owner__name clones")
    return clone_into_cache(repo)


def _demo_clone(repo: str) -> Path | None:
    """The demo's projects ship inside the package: any dataset naming them (the demo itself, or
    one derived from it by perturb or by hand) finds them without --repos and without a network."""

    owner, _, name = repo.partition("/")
    if owner != DEMO_OWNER or name not in {b.stem for b in demo_bundles()}:
        return None
    path = demo_repos_dir() / repo.replace("/", "__")
    return path if _is_git_repo(path) else None


def clone_into_cache(repo: str) -> Path:
    dest = config.repos_cache_dir() / repo.replace("/", "__")
    url = repo if "://" in repo else f"https://github.com/{repo}.git"
    tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=config.repos_cache_dir()))
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    proc = subprocess.run(["git", "clone", "--quiet", "--no-checkout", url, str(tmp / "r")],
                          capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        subprocess.run(["rm", "-rf", str(tmp)], check=False)
        first = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
        raise IssuebenchError(f"could not clone {url} ({first})",
                              hint="offline? pass --repos DIR holding a local clone as DIR/owner__name")
    try:
        os.rename(tmp / "r", dest)
    except OSError:
        pass  # another worker cloned it first
    subprocess.run(["rm", "-rf", str(tmp)], check=False)
    return dest
