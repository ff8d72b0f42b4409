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
import re
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
from issuebench.envs.build_tools import build_constraints, dated_build_tools, legacy_build_constraints
from issuebench.envs.dated_install import (
    DATED_CONSTRAINTS,
    compile_command,
    constraint_lines,
    egg_info_command,
    held_back,
    local_install_targets,
    pep621_requirements,
    wanted_extras,
)
from issuebench.envs.dating import (
    NO_CUTOFF,
    date_args,
    effective_cutoff,
    failed_builds,
    filtered_by_cutoff,
    newest_pin_date,
    not_on_index,
    only_yanked,
    unsatisfiable_requirements,
)
from issuebench.envs.interpreters import PythonInfo, _uv_bin, find_python
from issuebench.envs.requirements import (
    direct_reference_name,
    drop_from_conda_files,
    exact_pins,
    pinned_names,
    requirement_file_pins,
    unquote,
    usable_requirements,
)
from issuebench.errors import IssuebenchError, MissingSystemPiece
from issuebench.models import EnvSpec

INSTALL_TIMEOUT = 3600.0
_NETWORK_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE",
                     "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
                     "PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX")
# Rounds of "the resolver names a dependency the cutoff hides; take it as of the newest pin".
MAX_CUTOFF_EXCEPTIONS_ROUNDS = 30


class EnvBuildError(IssuebenchError):
    """The environment could not be built; `reason` is what the instance's status should say."""

    def __init__(self, env_hash: str, reason: str, *, hint: str | None = None) -> None:
        super().__init__(f"environment {env_hash} failed to build: {reason}",
                         hint=hint or "fix the recipe, then rerun with --rebuild "
                                      "(or `issuebench envs prune --failed`)")
        self.env_hash = env_hash
        self.reason = reason


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
        from issuebench.sandbox.types import Bind

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


def exempt_from_cutoff(spec: EnvSpec) -> dict[str, str]:
    """Packages the date does not apply to: the spec's exact pins and its named exceptions."""
    names = dict.fromkeys([*pinned_names(spec.packages), *spec.exclude_newer_exempt])
    return dict.fromkeys(names, NO_CUTOFF)


def exclude_newer_args(spec: EnvSpec) -> list[str]:
    return date_args(spec.exclude_newer, exempt_from_cutoff(spec))


def _uv() -> str:
    exe = _uv_bin()
    if not exe:
        raise MissingSystemPiece("uv is not installed", hint="pip install uv (it is a dependency of issuebench)")
    return exe


class _BuildLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

        self.notes: list[str] = []   # what the build decided on its own, for the manifest
        self.cutoff_exceptions: dict[str, str] = {}   # packages taken as of a later date, and that date

    def write(self, text: str) -> None:
        self._handle.write(text if text.endswith("\n") else text + "\n")
        self._handle.flush()

    def note(self, text: str) -> None:
        self.write(text)
        if text.startswith(("# substituted", "# cutoff")):
            self.notes.append(text.lstrip("# "))

    def close(self) -> None:
        self._handle.close()

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class _StepFailed(Exception):
    def __init__(self, reason: str, output: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.output = output


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

    @property
    def root(self) -> Path:
        root = self._cache_dir if self._cache_dir is not None else config.envs_dir()
        root.mkdir(parents=True, exist_ok=True)
        return root

    @property
    def sandbox(self) -> Any:
        if self._sandbox is None:
            from issuebench.sandbox import get_sandbox

            self._sandbox = get_sandbox()
        return self._sandbox

    # -- the public entry point -------------------------------------------------------------

    def ensure(self, spec: EnvSpec, workspace: Path) -> Env:
        """The built env for `spec`, building it first if needed (once per hash, under a lock)."""
        env_hash = spec.env_hash()
        root = self.root
        if not self._wants_rebuild(env_hash):
            env = self._load(spec, env_hash)
            if env is not None:
                return env
            self._raise_if_failed(env_hash)
        with cache.hash_lock(root, env_hash):
            if self._claim_rebuild(env_hash):
                cache.remove_env(root, env_hash)
            else:
                env = self._load(spec, env_hash)
                if env is not None:
                    return env
                self._raise_if_failed(env_hash)
            return self._build(spec, env_hash, Path(workspace))

    # -- cache state ------------------------------------------------------------------------

    def _wants_rebuild(self, env_hash: str) -> bool:
        with self._rebuilt_lock:
            return self.rebuild and env_hash not in self._rebuilt

    def _claim_rebuild(self, env_hash: str) -> bool:
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
        absent = system_deps.missing(spec.system_packages)
        if absent:
            # Not recorded as a failed build: installing the packages fixes it without --rebuild.
            raise EnvBuildError(env_hash, f"the recipe needs Debian packages that are not installed: {', '.join(absent)}",
                                hint=f"run `issuebench envs system-deps` as root ({system_deps.install_command(absent)})")
        path = cache.env_path(root, env_hash)
        shutil.rmtree(path, ignore_errors=True)   # an incomplete earlier attempt
        cache.clear_failure(root, env_hash)
        log = _BuildLog(path / cache.BUILD_LOG)
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
        except _StepFailed as exc:
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

    def _run_host(self, argv: list[str], log: _BuildLog, what: str, cwd: Path | None = None) -> None:
        log.write("$ " + " ".join(argv))
        try:
            proc = subprocess.run(argv, cwd=cwd, env=self.uv_env(), capture_output=True, text=True,
                                  timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise _StepFailed(f"{what}: timed out after {INSTALL_TIMEOUT:.0f}s") from None
        log.write(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            raise _StepFailed(f"{what}: {_last_error_line(proc.stderr or proc.stdout)}", proc.stdout + proc.stderr)

    def _steps(self, spec: EnvSpec, python: PythonInfo, path: Path, workspace: Path, log: _BuildLog) -> None:
        uv = _uv()
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
                          log: _BuildLog, scratch: Path) -> None:
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
            self._install_dated([*base, *reqs], self._conda_era(spec, log), file_pins, log,
                                "installing requirement files", workspace)
        if packages:
            self._install_dated([*base, *packages], spec, exact_pins(packages), log, "installing packages",
                                workspace)

    def _conda_era(self, spec: EnvSpec, log: _BuildLog) -> EnvSpec:
        """The spec to install its requirement files with. A conda environment file lists packages
        unpinned, and the reference's conda installed them when its images were built, beside
        recipe pins years newer than the task (xarray 0.12: pandas 1.5.3 and numpy 1.23 of 2022-23
        with a 2020 task). The era of such files is the pins' era: resolved as of the task's date,
        pydap 3.2.2 of 2017 fails to import on the recipe's Python 3.10 and pandas 1.5 refuses the
        sparse and numbagg of 2021."""
        if not spec.exclude_newer or not spec.has_conda_files():
            return spec
        when = newest_pin_date(exact_pins(spec.packages), spec.exclude_newer)
        if when is None:
            return spec
        log.note(f"# cutoff: the conda environment file's packages taken as of {when[:10]}, the recipe's newest "
                 f"exact pin, instead of {spec.exclude_newer[:10]}: conda installed them beside those pins")
        return spec.model_copy(update={"exclude_newer": when})

    def _install_dated(self, argv: list[str], spec: EnvSpec, pins: list[tuple[str, str]], log: _BuildLog,
                       what: str, cwd: Path) -> None:
        """Install with the cutoff; exact pins exempt; dependencies that only pins published after
        the cutoff need are taken as of the newest such pin, as the resolver names them."""
        cutoff = spec.exclude_newer
        per_package = {**exempt_from_cutoff(spec), **dict.fromkeys((n for n, _ in pins), NO_CUTOFF)}
        binary_only: list[str] = []
        dated_builds: list[str] = []
        pins_date: str | None = None
        for _ in range(MAX_CUTOFF_EXCEPTIONS_ROUNDS):
            try:
                wheels = [a for n in binary_only for a in ("--only-binary", n)]
                self._run_host([*argv[:3], *date_args(cutoff, per_package), *dated_builds, *wheels, *argv[3:]],
                               log, what, cwd=cwd)
                log.cutoff_exceptions.update({n: d for n, d in per_package.items() if d != NO_CUTOFF})
                return
            except _StepFailed as exc:
                absent = not_on_index(exc.output) or unsatisfiable_requirements(exc.output)
                if absent and drop_from_conda_files(argv, absent):
                    # conda environment files name conda-only packages (cdms2): not on the index.
                    log.note(f"# substituted: {', '.join(absent)} from a conda environment file left out: "
                             "the package index has no release of it that installs here")
                    continue
                yanked = only_yanked(exc.output)
                if yanked and yanked not in argv:
                    # Every release was withdrawn since (types-pkg_resources): an exact pin may
                    # still take a yanked release, as the packaging standards allow.
                    argv = [*argv, yanked]
                    log.note(f"# substituted: {yanked} pinned exactly: every release the date allows is yanked")
                    continue
                unbuildable = failed_builds(exc.output)
                tools = legacy_build_constraints(Path(argv[4]).parent.parent) \
                    if unbuildable and not dated_builds else None
                if tools is not None:
                    # An exact pin of setuptools lifts the date for it everywhere, builds included:
                    # markupsafe 1.0's setup.py imports `Feature`, gone from setuptools since 2020.
                    # Builds first get the env's own build tools, which are the era's.
                    dated_builds = ["--build-constraint", str(tools)]
                    log.note(f"# builds: {', '.join(unbuildable)} built with the environment's own build tools "
                             f"({tools.read_text().strip().replace(chr(10), ', ')}): today's cannot build it")
                    continue
                if cutoff and unbuildable and not set(unbuildable) & set(binary_only):
                    # The era's release has no wheel for this interpreter and no longer builds
                    # (bottleneck 1.3.2 wants numpy 1.17 built from source on Python 3.10): take
                    # the first release that ships a wheel for it, as near the date as that allows.
                    binary_only += unbuildable
                    for name in unbuildable:
                        per_package[name] = self._first_wheel_date(name, argv[4], cutoff) or NO_CUTOFF
                    log.note(f"# cutoff: {', '.join(unbuildable)} taken as the first wheel for this interpreter "
                             f"({', '.join(per_package[n][:10] for n in unbuildable)}): the release of the date "
                             "cannot be built here")
                    continue
                hidden = [n for n in filtered_by_cutoff(exc.output) if n not in per_package]
                if not cutoff or not hidden:
                    raise
                if pins_date is None:
                    pins_date = newest_pin_date([*pins, *exact_pins(spec.packages)], cutoff)
                    if pins_date is None:
                        raise  # no pin postdates the date: the date itself is what the resolver refuses
                    # Everything the pins need, as of their time, in one resolution; the loop then
                    # handles whatever else the resolver still names.
                    hidden += [n for n in self._pin_closure(argv[0], argv[4], pins, pins_date, log)
                               if n not in per_package and n not in hidden]
                for name in hidden:
                    per_package[name] = pins_date
                log.note(f"# cutoff: {', '.join(hidden)} taken as of {pins_date[:10]}, the newest exact pin's "
                         f"publication (pins win over the date {cutoff[:10]}, and they need these)")
        raise _StepFailed(f"{what}: the resolver kept asking for packages the date hides")

    def _first_wheel_date(self, name: str, python: str, cutoff: str) -> str | None:
        """The end of the day the first wheel of `name` for the env's interpreter was published."""
        from issuebench.envs.release_dates import first_wheel_after

        proc = subprocess.run([python, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, check=False)
        when = first_wheel_after(name, proc.stdout.strip(), cutoff) if proc.returncode == 0 else None
        return when[:10] + "T23:59:59Z" if when else None

    def _pin_closure(self, uv: str, python: str, pins: list[tuple[str, str]], when: str,
                     log: _BuildLog) -> list[str]:
        """Names of the packages the exact pins need, resolved together as of `when` (best effort)."""
        argv = [uv, "pip", "compile", "-", "--python", python, "--exclude-newer", when,
                "--no-header", "--no-annotate", "--quiet"]
        try:
            proc = subprocess.run(argv, input="\n".join(f"{n}=={v}" for n, v in pins), capture_output=True,
                                  text=True, timeout=300, env=self.uv_env(), check=False)
        except (OSError, subprocess.TimeoutExpired):
            return []
        if proc.returncode != 0:
            log.write(f"# the pins alone do not resolve as of {when[:10]}: {_last_error_line(proc.stderr)}")
            return []
        return [line.split("==")[0].strip() for line in proc.stdout.splitlines() if "==" in line]

    def _compile_bytecode(self, venv: Path, log: _BuildLog) -> None:
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
                      f"{_last_error_line(proc.stdout + proc.stderr)}")

    def _run_sandboxed(self, spec: EnvSpec, venv: Path, workspace: Path, log: _BuildLog,
                       python: PythonInfo) -> None:
        """The pre-install and install commands, in the sandbox with the network on."""
        from issuebench.sandbox.types import Bind

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
        build_pins = dated_build_tools(_uv(), spec.exclude_newer, python.version)
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
                   log: _BuildLog) -> None:
        from issuebench.sandbox.types import Limits

        limits = Limits(timeout=INSTALL_TIMEOUT, memory_mb=None, max_procs=None)
        for command in commands:
            log.write(f"$ (sandbox, network={not self.offline}) {command}")
            result = self.sandbox.run(["bash", "-c", command], workspace=workspace, binds=binds,
                                      env=run_env, limits=limits, network=not self.offline,
                                      cwd=config.TESTBED_PATH)
            log.write(result.output)
            if result.status != "ok" or result.returncode != 0:
                detail = _last_error_line(result.output) if result.output.strip() else result.reason
                raise _StepFailed(f"`{command}` failed (status {result.status}, exit {result.returncode}): {detail}")

    def _dated_constraints(self, spec: EnvSpec, venv: Path, workspace: Path, binds: list[Any],
                           run_env: dict[str, str], log: _BuildLog, targets: list[str],
                           build: Path | None) -> Path | None:
        """Constraints that make the era's pip install the project's requirements as of the date
        (dated_install.py); None, with a note, when they cannot be read or resolved."""
        extras = wanted_extras(targets)
        declared = pep621_requirements(workspace, extras)
        if declared is None:
            listing = venv / ".issuebench-declared.txt"
            try:
                self._sandboxed([egg_info_command(venv / "bin" / "python", extras, listing)], workspace, binds,
                                run_env, log)
                declared = listing.read_text().splitlines()
            except (_StepFailed, OSError):
                log.note("# cutoff: the project's declared requirements could not be read; "
                         "its install resolves them itself")
                return None
        project = next((r.split(":", 1)[1].strip() for r in declared if r.startswith("# project:")), None)
        declared = [direct_reference_name(r) or r for r in declared if r.strip() and not r.startswith("#")]
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

    def _resolve_dated(self, spec: EnvSpec, venv: Path, log: _BuildLog, requirements: list[str]) -> str | None:
        """uv's resolution of `requirements` as of the spec's date, as `name==version` lines."""
        with tempfile.TemporaryDirectory(prefix="issuebench-dated-") as tmp:
            request = Path(tmp) / "requirements.in"
            request.write_text("\n".join(requirements) + "\n")
            out = Path(tmp) / "resolved.txt"
            argv = compile_command(_uv(), venv / "bin" / "python", str(spec.exclude_newer),
                                   {**exempt_from_cutoff(spec), **log.cutoff_exceptions}, request, out)
            try:
                self._run_host(argv, log, "resolving the install's requirements as of the date")
            except _StepFailed:
                return None
            return out.read_text()

    def _freeze(self, venv: Path) -> list[str]:
        try:
            proc = subprocess.run([_uv(), "pip", "freeze", "--python", str(venv / "bin" / "python")],
                                  capture_output=True, text=True, timeout=120, env=self.uv_env())
        except (OSError, subprocess.TimeoutExpired):
            return []
        return proc.stdout.splitlines() if proc.returncode == 0 else []


def _uv_version() -> str:
    try:
        return subprocess.run([_uv(), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired, IssuebenchError):
        return ""


def _last_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    for line in reversed(lines):
        if re.search(r"error|Error|ERROR|failed|No solution|unsatisfiable", line):
            return line[:400]
    return lines[-1][:400] if lines else "no output"
