"""Build one uv virtual environment per EnvSpec hash, once, and hand it out to every instance.

Steps of a build (each logged to <env>/build.log):
1. find the interpreter (interpreters.find_python), `uv venv [--seed]` with the cutoff date;
2. `uv pip install` the spec's packages and requirement files, resolution limited to releases
   before `exclude_newer`, except explicit `==` pins and `exclude_newer_exempt` (a pin must win
   over the date: the reference pins releases that postdate some tasks);
3. the spec's pre_install and install commands, inside the sandbox with the network on, the venv
   writable and the workspace at TESTBED_PATH, so an editable install points at TESTBED_PATH and
   every instance later mounts its own workspace there. As in the reference's images, what these
   commands change in the tree (a `sed` on setup.py, `*.egg-info`, in-place extensions) belongs to
   the environment: the harness carries it to every workspace of the env (harness/overlay.py);
4. the manifest env.json, written last: an env without it is not built.
A failed build leaves <hash>.failed.json; later instances fail fast with its reason until
`--rebuild` or `issuebench envs prune --failed`.

Here: the builder every kind is made with (kinds.KindHost) and the Python kind's build under its
hash lock. Steps 1-3 are venv_steps.py (the dated constraints of step 3 dated_constraints.py);
the Env record, its manifest and the failure record python_env.py.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

from issuebench import config
from issuebench.content_store import STORE, share_files
from issuebench.envs import cache, system_deps
from issuebench.envs.build_log import BuildLog, EnvBuildError, StepFailed
from issuebench.envs.dating import date_args, effective_cutoff, exempt_from_cutoff
from issuebench.envs.interpreters import PythonInfo, find_python
from issuebench.envs.kind_registry import KINDS
from issuebench.envs.kinds import EnvKind, RunPreparation, UnknownKind
from issuebench.envs.python_env import Env, load_env, raise_if_failed, record_failure, write_manifest
from issuebench.envs.venv_steps import VenvSteps, uv_env
from issuebench.errors import MissingSystemPiece
from issuebench.models import EnvSpec
from issuebench.sandbox import get_sandbox


def exclude_newer_args(spec: EnvSpec) -> list[str]:
    return date_args(spec.exclude_newer, exempt_from_cutoff(spec))


class EnvBuilder:
    def __init__(self, cache_dir: Path | None = None, sandbox: Any | None = None,
                 python_fallback: str = "error", offline: bool = False, rebuild: bool = False) -> None:
        self._cache_dir = cache_dir
        self._sandbox = sandbox
        self.python_fallback = python_fallback
        self.offline = offline
        self.rebuild = rebuild
        self._rebuilt: set[str] = set()
        self._rebuilt_lock = threading.Lock()
        self._kinds: dict[str, EnvKind] = {}

    @property
    def root(self) -> Path:
        root = self._cache_dir if self._cache_dir is not None else config.envs_dir()
        root.mkdir(parents=True, exist_ok=True)
        return root

    @property
    def sandbox(self) -> Any:
        if self._sandbox is None:

            self._sandbox = get_sandbox()
        return self._sandbox

    # -- the public entry points ------------------------------------------------------------

    def ensure(self, spec: EnvSpec, workspace: Path) -> Any:
        """The built env for `spec`, by its kind, building it first if needed (once per hash)."""
        return self.kind(spec.kind).ensure(spec, workspace)

    def prepare_run(self, env: Any, workspace: Path) -> RunPreparation:
        """What one run in `env` needs beyond it, by the env's kind (kinds.RunPreparation)."""
        return self.kind(env.spec.kind).prepare_run(env, workspace)

    def prepare_patched_run(self, env: Any, workspace: Path, prep: RunPreparation) -> RunPreparation:
        """`prep` for the workspace as the patches left it: a kind that reads the project's declared
        requirements again (Python's) adds what the patches declare; the others keep `prep`."""
        kind = self.kind(env.spec.kind)
        again = getattr(kind, "prepare_patched_run", None)
        return again(env, workspace, prep) if again is not None else prep

    def after_run(self, env: Any, workspace: Path, pristine: Path) -> list[str]:
        """What a kind keeps from a finished run for later runs of the same checkout (Python: the
        bytecode of the modules it compiled); lines for the instance log."""
        keep = getattr(self.kind(env.spec.kind), "after_run", None)
        return keep(env, workspace, pristine) if keep is not None else []

    def kind(self, name: str) -> EnvKind:
        with self._rebuilt_lock:
            if name not in self._kinds:
                if name not in KINDS:
                    raise UnknownKind(name, sorted(KINDS))
                self._kinds[name] = KINDS[name](self)
            return self._kinds[name]

    def ensure_python(self, spec: EnvSpec, workspace: Path) -> Env:
        """The "python" kind's build: a uv venv (once per hash, under a lock)."""
        env_hash = spec.env_hash()
        root = self.root
        if not self.wants_rebuild(env_hash):
            env = self._load(spec, env_hash)
            if env is not None:
                return env
            self._raise_if_failed(env_hash)
        with cache.hash_lock(root, env_hash):
            if self.claim_rebuild(env_hash):
                cache.remove_env(root, env_hash)
            else:
                env = self._load(spec, env_hash)
                if env is not None:
                    return env
                self._raise_if_failed(env_hash)
            return self._build(spec, env_hash, Path(workspace))

    # -- cache state ------------------------------------------------------------------------

    def wants_rebuild(self, env_hash: str) -> bool:
        with self._rebuilt_lock:
            return self.rebuild and env_hash not in self._rebuilt

    def claim_rebuild(self, env_hash: str) -> bool:
        with self._rebuilt_lock:
            if self.rebuild and env_hash not in self._rebuilt:
                self._rebuilt.add(env_hash)
                return True
            return False

    def _load(self, spec: EnvSpec, env_hash: str) -> Env | None:
        return load_env(self.root, spec, env_hash, self.python_fallback)

    def _raise_if_failed(self, env_hash: str) -> None:
        raise_if_failed(self.root, env_hash)

    # -- the build --------------------------------------------------------------------------

    def _build(self, spec: EnvSpec, env_hash: str, workspace: Path) -> Env:
        """Steps 1-4 of the module docstring, the first three in venv_steps.py."""
        root = self.root
        python = self._interpreter(spec, env_hash)
        path = cache.env_path(root, env_hash)
        shutil.rmtree(path, ignore_errors=True)   # an incomplete earlier attempt
        cache.clear_failure(root, env_hash)
        log = BuildLog(path / cache.BUILD_LOG)
        started = time.time()
        dated = _with_effective_cutoff(spec, env_hash, python, log)
        try:
            VenvSteps(self.sandbox, self.offline).run(dated, python, path, workspace, log)
        except StepFailed as exc:
            # Keep the log beside the failure record; drop the half-built venv.
            record_failure(root, env_hash, exc.reason, dated, log)
            raise EnvBuildError(env_hash, exc.reason) from None
        _share_with_other_envs(path, root, log)
        log.close()
        write_manifest(root, env_hash, dated, spec.exclude_newer, python, log, started, self.uv_env())
        env = self._load(dated, env_hash)
        assert env is not None
        return env

    def _interpreter(self, spec: EnvSpec, env_hash: str) -> PythonInfo:
        """The interpreter the spec asks for, once the Debian packages it needs are there; neither
        is recorded as a failed build: installing them fixes it without --rebuild."""
        try:
            python = find_python(spec.python, self.python_fallback)
        except MissingSystemPiece as exc:
            raise EnvBuildError(env_hash, exc.message, hint=exc.hint) from exc
        absent = system_deps.missing_packages(spec.system_packages)
        if absent:
            raise EnvBuildError(env_hash, f"the recipe needs Debian packages that are not installed: {', '.join(absent)}",
                                hint=f"run `issuebench envs system-deps` as root ({system_deps.install_command(absent)})")
        return python

    def uv_env(self) -> dict[str, str]:
        """The environment uv runs with on the host (one package cache, no user config, the date)."""
        return uv_env(self.offline)


def _share_with_other_envs(path: Path, root: Path, log: BuildLog) -> None:
    """The built venv's installed files (what pip copied; uv's are links to its cache already)
    become links shared with every environment holding the same file: nothing writes to a venv
    once it is built (each run binds it read-only)."""
    saved = share_files(path / "lib", root / STORE)
    if saved:
        log.write(f"# {saved / 2**20:.1f} MiB of installed files shared with other environments (one copy on disk)")


def _with_effective_cutoff(spec: EnvSpec, env_hash: str, python: PythonInfo, log: BuildLog) -> EnvSpec:
    """The spec with the cutoff the interpreter allows, said at the top of the log."""
    dated = spec.model_copy(update={"exclude_newer": effective_cutoff(spec.exclude_newer, python.version)})
    log.write(f"# issuebench env {env_hash}: python {python.version} ({python.path}), "
              f"exclude_newer={dated.exclude_newer}")
    if dated.exclude_newer != spec.exclude_newer:
        log.write(f"# cutoff moved from {spec.exclude_newer} to {dated.exclude_newer}: Python {python.version} "
                  "was released after the task, and packages from before it cannot support it")
    return dated
