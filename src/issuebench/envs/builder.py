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
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from issuebench import config
from issuebench.envs import cache, system_deps
from issuebench.envs.build_log import BuildLog, EnvBuildError, StepFailed, last_error_line
from issuebench.envs.build_tools import build_constraints, dated_build_tools
from issuebench.envs.dated_install import (
    DATED_CONSTRAINTS,
    HelperFailed,
    constraint_lines,
    held_back,
    local_install_targets,
    pep621_requirements,
    read_declared,
    split_listing,
    wanted_extras,
)
from issuebench.envs.dated_packages import DatedPackages
from issuebench.envs.dating import date_args, effective_cutoff, exempt_from_cutoff
from issuebench.envs.interpreters import PythonInfo, find_python, uv_command
from issuebench.envs.kind_registry import KINDS
from issuebench.envs.kinds import EnvKind, RunPreparation, UnknownKind
from issuebench.envs.requirements import (
    direct_reference_name,
    exact_pins,
    pinned_names,
    requirement_file_pins,
    unquote,
    usable_requirements,
)
from issuebench.errors import IssuebenchError, MissingSystemPiece
from issuebench.models import EnvSpec
from issuebench.sandbox import Bind, Limits, get_sandbox

INSTALL_TIMEOUT = 3600.0
_NETWORK_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE",
                     "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
                     "PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX")


@dataclass
class Env:
    path: Path
    spec: EnvSpec
    env_hash: str
    python_version: str
    python_prefix: Path | None = None
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def binds(self) -> list[Any]:
        """Read-only binds the sandbox needs: the venv and the interpreter installation it links to."""

        binds = [Bind(self.path)]
        if self.python_prefix is not None and not _is_under(self.path, self.python_prefix):
            binds.append(Bind(self.python_prefix))
        return binds

    def run_env(self) -> dict[str, str]:
        env = {
            "PATH": f"{self.path / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "VIRTUAL_ENV": str(self.path),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.update(self.spec.env_vars)
        return env


def _is_under(prefix: Path, path: Path) -> bool:
    try:
        path.relative_to(prefix)
        return True
    except ValueError:
        return False


def _same_minor(wanted: str, used: str) -> bool:
    """Whether `used` (e.g. 3.9.18) is the Python `wanted` asks for (e.g. 3.9); "3" asks for any 3."""
    want = wanted.strip().split(".")
    return not used or used.split(".")[: len(want[:2])] == want[:2]


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
        manifest = cache.read_manifest(self.root, env_hash)
        if manifest is None:
            return None
        used = str(manifest.get("python_version", ""))
        if self.python_fallback == "error" and not _same_minor(spec.python, used):
            # Built earlier under --python-fallback nearest: this run did not accept a stand-in.
            raise EnvBuildError(env_hash, f"this environment was built with Python {used} in place of "
                                f"Python {spec.python} (--python-fallback nearest)",
                                hint=f"pass --python-fallback nearest to use it, or install Python {spec.python}")
        cache.touch_last_used(self.root, env_hash)
        prefix = manifest.get("python_prefix")
        return Env(path=cache.env_path(self.root, env_hash), spec=spec, env_hash=env_hash,
                   python_version=manifest.get("python_version", ""),
                   python_prefix=Path(prefix) if prefix else None, manifest=manifest)

    def _raise_if_failed(self, env_hash: str) -> None:
        failure = cache.read_failure(self.root, env_hash)
        if failure is not None:
            raise EnvBuildError(env_hash, f"{failure.get('reason', 'unknown')} (recorded {failure.get('time', '?')})")

    # -- the build --------------------------------------------------------------------------

    def _build(self, spec: EnvSpec, env_hash: str, workspace: Path) -> Env:
        root = self.root
        try:
            python = find_python(spec.python, self.python_fallback)
        except MissingSystemPiece as exc:
            # Not recorded as a failed build: installing the interpreter fixes it without --rebuild.
            raise EnvBuildError(env_hash, exc.message, hint=exc.hint) from exc
        absent = system_deps.missing_packages(spec.system_packages)
        if absent:
            # Not recorded as a failed build: installing the packages fixes it without --rebuild.
            raise EnvBuildError(env_hash, f"the recipe needs Debian packages that are not installed: {', '.join(absent)}",
                                hint=f"run `issuebench envs system-deps` as root ({system_deps.install_command(absent)})")
        path = cache.env_path(root, env_hash)
        shutil.rmtree(path, ignore_errors=True)   # an incomplete earlier attempt
        cache.clear_failure(root, env_hash)
        log = BuildLog(path / cache.BUILD_LOG)
        started = time.time()
        requested_cutoff = spec.exclude_newer
        spec = spec.model_copy(update={"exclude_newer": effective_cutoff(spec.exclude_newer, python.version)})
        log.write(f"# issuebench env {env_hash}: python {python.version} ({python.path}), "
                  f"exclude_newer={spec.exclude_newer}")
        if spec.exclude_newer != requested_cutoff:
            log.write(f"# cutoff moved from {requested_cutoff} to {spec.exclude_newer}: Python {python.version} "
                      "was released after the task, and packages from before it cannot support it")
        try:
            self._steps(spec, python, path, workspace, log)
        except StepFailed as exc:
            log.close()
            cache.record_failure(root, env_hash, exc.reason, log.tail(), spec.model_dump(mode="json"))
            # Keep the log beside the failure record; drop the half-built venv.
            failed_log = root / f"{env_hash}.failed.log"
            shutil.copyfile(path / cache.BUILD_LOG, failed_log)
            shutil.rmtree(path, ignore_errors=True)
            raise EnvBuildError(env_hash, exc.reason) from None
        log.close()
        manifest = {
            "env_hash": env_hash,
            "spec": spec.model_dump(mode="json"),
            "python_requested": spec.python,
            "python_version": python.version,
            "python_path": str(python.path),
            "python_prefix": str(python.prefix) if python.prefix else None,
            "python_fell_back": python.fell_back,
            "exclude_newer": spec.exclude_newer,
            "exclude_newer_requested": requested_cutoff,
            "exclude_newer_exempt": list(exempt_from_cutoff(spec)),
            "decisions": log.notes,
            "installed": self._freeze(path),
            "uv": _uv_version(),
            "build_seconds": round(time.time() - started, 3),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        cache.write_json_atomic(path / cache.MANIFEST, manifest)
        cache.touch_last_used(root, env_hash)
        env = self._load(spec, env_hash)
        assert env is not None
        return env

    def uv_env(self) -> dict[str, str]:
        """The environment uv runs with on the host (one package cache, no user config, the date)."""
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PYTHON", "PYTHONPATH")}
        # Keep uv's one shared package cache: files are hard-linked into every env, so N envs that
        # share packages cost the disk of one copy.
        env.setdefault("UV_LINK_MODE", "hardlink")
        env["UV_PYTHON_DOWNLOADS"] = "never"
        # Never let the caller's project (its pyproject.toml, uv.toml) steer an env build.
        env["UV_NO_PROJECT"] = "1"
        env["UV_NO_CONFIG"] = "1"
        # Builds of the same sdist by parallel env builds wait for each other; uv's default of
        # 300 s is shorter than one scientific package's build on a loaded machine.
        env.setdefault("UV_LOCK_TIMEOUT", "3600")
        if self.offline:
            env["UV_OFFLINE"] = "1"
        return env

    def _run_host(self, argv: list[str], log: BuildLog, what: str, cwd: Path | None = None) -> None:
        log.write("$ " + " ".join(argv))
        try:
            proc = subprocess.run(argv, cwd=cwd, env=self.uv_env(), capture_output=True, text=True,
                                  timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise StepFailed(f"{what}: timed out after {INSTALL_TIMEOUT:.0f}s") from None
        log.write(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            raise StepFailed(f"{what}: {last_error_line(proc.stderr or proc.stdout)}", proc.stdout + proc.stderr)

    def _steps(self, spec: EnvSpec, python: PythonInfo, path: Path, workspace: Path, log: BuildLog) -> None:
        uv = uv_command()
        venv_cmd = [uv, "venv", str(path), "--python", str(python.path), "--allow-existing"]
        if spec.seed_pip:
            venv_cmd.append("--seed")
        if spec.exclude_newer:
            venv_cmd += ["--exclude-newer", spec.exclude_newer]   # era-appropriate pip/setuptools
        self._run_host(venv_cmd, log, "creating the venv", cwd=path.parent)
        with tempfile.TemporaryDirectory(prefix="issuebench-reqs-") as tmp:
            self._install_packages(uv, spec, path, workspace, log, Path(tmp))
        self._compile_bytecode(path, log)
        if spec.pre_install or spec.install:
            self._run_sandboxed(spec, path, workspace, log, python)

    def _install_packages(self, uv: str, spec: EnvSpec, venv: Path, workspace: Path,
                          log: BuildLog, scratch: Path) -> None:
        reqs: list[str] = []
        for entry in spec.requirements_files:
            # "a.txt|b.txt": alternatives, the first one present is used (as the reference does).
            present = [workspace / rel.strip() for rel in entry.split("|") if (workspace / rel.strip()).is_file()]
            if not present:
                log.write(f"# requirements file {entry} is not in the repository at this commit: skipped")
                continue
            reqs += ["-r", str(usable_requirements(present[0], log.note, scratch))]
        packages = [unquote(p) for p in spec.packages if p.strip()]
        base = [uv, "pip", "install", "--python", str(venv / "bin" / "python")]
        # As the reference does: the repository's requirement files first, then the recipe's pinned
        # packages on top, so a recipe pin overrides an older pin in the repository's files.
        if reqs:
            # An exact pin in the repository's own files wins over the date too (a release can
            # pin a package published hours after its commit).
            file_pins = [pin for flag, f in zip(reqs[::2], reqs[1::2], strict=True) if flag == "-r"
                         for pin in requirement_file_pins(Path(f))]
            self._dated.install([*base, *reqs], self._dated.conda_era(spec, log), file_pins, log,
                                "installing requirement files", workspace)
        if packages:
            self._dated.install([*base, *packages], spec, exact_pins(packages), log, "installing packages",
                                workspace)

    def _compile_bytecode(self, venv: Path, log: BuildLog) -> None:
        """Compile what was installed, as pip does at install time, and like pip never fail on it.

        Test suites rely on it: a dependency with an invalid escape sequence compiled at import
        under `filterwarnings = error` fails to import, and the environment is read-only in the
        sandbox, so .pyc files could not be cached later anyway.
        """
        site = sorted(venv.glob("lib/python*/site-packages"))
        if not site:
            return
        argv = [str(venv / "bin" / "python"), "-m", "compileall", "-q", "-j", "0", str(site[0])]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=900)
        if proc.returncode != 0:
            log.write(f"# bytecode compilation left some files uncompiled (as pip would): "
                      f"{last_error_line(proc.stdout + proc.stderr)}")

    def _run_sandboxed(self, spec: EnvSpec, venv: Path, workspace: Path, log: BuildLog,
                       python: PythonInfo) -> None:
        """The pre-install and install commands, in the sandbox with the network on."""

        env = Env(venv, spec, spec.env_hash(), python.version, python.prefix)
        run_env = env.run_env()
        # PIP_NO_CACHE_DIR trips old pips (18.x read it as an int path); a private /tmp cache does not.
        run_env.update({"PIP_CACHE_DIR": "/tmp/pip-cache", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                        "PIP_NO_INPUT": "1", "UV_CACHE_DIR": "/tmp/uv-cache", "UV_NO_CONFIG": "1",
                        "UV_PYTHON_DOWNLOADS": "never"})
        # Install steps reach the package index: the host's certificate and proxy settings go along
        # (a machine behind an inspecting proxy has its own CA; uv does not read pip's config).
        run_env.update({k: v for k, v in os.environ.items() if k in _NETWORK_SETTINGS})
        if spec.exclude_newer:
            # pip (new enough) and uv honour the cutoff for whatever the install pulls in.
            run_env["UV_EXCLUDE_NEWER"] = spec.exclude_newer
            run_env["PIP_UPLOADED_PRIOR_TO"] = spec.exclude_newer
        build_pins = dated_build_tools(uv_command(), spec.exclude_newer, python.version)
        constraints = build_constraints(venv, build_pins, workspace)
        if constraints is not None:
            # Isolated builds use the env's own build tools (see build_tools.py); PIP_CONSTRAINT
            # reaches the inner pip that fills the build environment.
            run_env["PIP_CONSTRAINT"] = str(constraints)
            log.write(f"# isolated builds constrained to: {constraints.read_text().strip()}")
        binds = [Bind(venv, writable=True)]
        if python.prefix is not None:
            binds.append(Bind(python.prefix))
        self._sandboxed(spec.pre_install, workspace, binds, run_env, log)
        targets = local_install_targets(spec.install) if spec.exclude_newer else None
        if targets:
            dated = self._dated_constraints(spec, venv, workspace, binds, run_env, log, targets, constraints)
            if dated is not None:
                run_env["PIP_CONSTRAINT"] = str(dated)
        self._sandboxed(spec.install, workspace, binds, run_env, log)

    def _sandboxed(self, commands: list[str], workspace: Path, binds: list[Any], run_env: dict[str, str],
                   log: BuildLog) -> None:

        limits = Limits(timeout=INSTALL_TIMEOUT, memory_mb=None, max_procs=None)
        for command in commands:
            log.write(f"$ (sandbox, network={not self.offline}) {command}")
            result = self.sandbox.run(["bash", "-c", command], workspace=workspace, binds=binds,
                                      env=run_env, limits=limits, network=not self.offline,
                                      cwd=config.TESTBED_PATH)
            log.write(result.output)
            if result.status != "ok" or result.returncode != 0:
                detail = last_error_line(result.output) if result.output.strip() else result.reason
                raise StepFailed(f"`{command}` failed (status {result.status}, exit {result.returncode}): {detail}")

    def _dated_constraints(self, spec: EnvSpec, venv: Path, workspace: Path, binds: list[Any],
                           run_env: dict[str, str], log: BuildLog, targets: list[str],
                           build: Path | None) -> Path | None:
        """Constraints that make the era's pip install the project's requirements as of the date
        (dated_install.py); None, with a note, when they cannot be read or resolved."""
        extras = wanted_extras(targets)
        declared = pep621_requirements(workspace, extras)
        if declared is None:
            python = venv / "bin" / "python"
            log.write(f"$ (sandbox, network={not self.offline}) {python} <declared requirements script> "
                      f"{','.join(extras)}")
            try:
                answer = read_declared(self.sandbox, str(python), workspace, extras, binds=binds, env=run_env,
                                       network=not self.offline, timeout=INSTALL_TIMEOUT)
            except HelperFailed as exc:
                # The harness's own helper failed: no reason to believe the project declares nothing.
                raise StepFailed(f"the project's declared requirements could not be read: {exc.message}") from None
            if answer.lines is None:
                log.note(f"# cutoff: the project's declared requirements could not be read ({answer.unreadable}); "
                         "its install resolves them itself")
                return None
            log.write("\n".join(answer.lines))
            declared = answer.lines
        requirements, project = split_listing(declared)
        declared = [direct_reference_name(r) or r for r in requirements]
        pins = [unquote(p) for p in spec.packages if p.strip() and "==" in p]
        # With the recipe's pins first; when they contradict the project (sphinx's setup.py, once
        # edited, wants Jinja2<3.0 beside a Jinja2==3.0.3 pin), without them, leaving the pinned
        # packages to pip as the install would without us.
        compiled = self._resolve_dated(spec, venv, log, [*declared, *pins])
        if compiled is None and pins:
            compiled = self._resolve_dated(spec, venv, log, declared)
            if compiled is not None:
                pinned = {canonicalize_name(n) for n in pinned_names(pins)}
                compiled = "\n".join(line for line in compiled.splitlines()
                                      if canonicalize_name(line.split("==")[0].strip()) not in pinned)
        if compiled is None:
            log.note("# cutoff: the install's own requirements could not be resolved as of the date; "
                     "the install resolves them itself")
            return None
        floors = held_back(compiled, declared, str(spec.exclude_newer))
        if floors:
            fresher = self._resolve_dated(spec, venv, log, [*declared, *pins, *floors])
            if fresher is None and len(floors) > 1:   # keep the floors that fit on their own
                floors = [f for f in floors if self._resolve_dated(spec, venv, log, [*declared, *pins, f])]
                fresher = self._resolve_dated(spec, venv, log, [*declared, *pins, *floors]) if floors else None
            if fresher is not None:
                compiled = fresher
                log.note(f"# cutoff: {', '.join(floors)} asked for: the first resolution held them years behind "
                         "the date, and a release of the year before the date fits")
        override = build.read_text().splitlines() if build is not None else []
        lines = constraint_lines(compiled, override, exclude=project)
        dated = venv / DATED_CONSTRAINTS
        dated.write_text("\n".join(lines) + "\n")
        log.write(f"# the install's requirements constrained to their releases as of {spec.exclude_newer}: "
                  f"{', '.join(lines)}")
        return dated

    def _resolve_dated(self, spec: EnvSpec, venv: Path, log: BuildLog, requirements: list[str]) -> str | None:
        """uv's resolution of `requirements` as of the spec's date, as `name==version` lines."""
        return self._dated.resolve(venv / "bin" / "python", str(spec.exclude_newer),
                                   {**exempt_from_cutoff(spec), **log.cutoff_exceptions}, requirements, log,
                                   "resolving the install's requirements as of the date")

    @property
    def _dated(self) -> DatedPackages:
        return DatedPackages(uv_command(), self._run_host)

    def _freeze(self, venv: Path) -> list[str]:
        try:
            proc = subprocess.run([uv_command(), "pip", "freeze", "--python", str(venv / "bin" / "python")],
                                  capture_output=True, text=True, timeout=120, env=self.uv_env())
        except (OSError, subprocess.TimeoutExpired):
            return []
        return proc.stdout.splitlines() if proc.returncode == 0 else []


def _uv_version() -> str:
    try:
        return subprocess.run([uv_command(), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired, IssuebenchError):
        return ""
