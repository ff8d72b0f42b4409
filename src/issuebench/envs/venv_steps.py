"""The steps of a uv venv's build, 1-3 of builder.py's docstring: the venv, the dated package
installs on the host, then the spec's own commands in the sandbox with the network on."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from issuebench import config
from issuebench.envs.build_log import BuildLog, StepFailed, last_error_line, took
from issuebench.envs.build_tools import build_constraints, dated_build_tools
from issuebench.envs.dated_constraints import InstallSite, dated_constraints, with_wheels
from issuebench.envs.dated_install import local_install_targets
from issuebench.envs.dated_packages import DatedPackages
from issuebench.envs.interpreters import PythonInfo, uv_command
from issuebench.envs.python_env import Env
from issuebench.envs.requirements import exact_pins, requirement_file_pins, unquote, usable_requirements
from issuebench.models import EnvSpec
from issuebench.sandbox import Bind, Limits

INSTALL_TIMEOUT = 3600.0
_NETWORK_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE",
                     "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
                     "PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX")


def uv_env(offline: bool) -> dict[str, str]:
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
    if offline:
        env["UV_OFFLINE"] = "1"
    return env


class VenvSteps:
    """One venv's build steps, with the run's sandbox and its offline setting."""

    def __init__(self, sandbox: Any, offline: bool) -> None:
        self.sandbox = sandbox
        self.offline = offline

    def run(self, spec: EnvSpec, python: PythonInfo, path: Path, workspace: Path, log: BuildLog) -> None:
        """Steps 1-3; StepFailed names the step that failed."""
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

    def _run_host(self, argv: list[str], log: BuildLog, what: str, cwd: Path | None = None) -> None:
        log.write("$ " + " ".join(argv))
        start = time.monotonic()
        try:
            proc = subprocess.run(argv, cwd=cwd, env=uv_env(self.offline), capture_output=True, text=True,
                                  timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise StepFailed(f"{what}: timed out after {INSTALL_TIMEOUT:.0f}s") from None
        log.write(proc.stdout + proc.stderr)
        log.write(took(start, proc.returncode))
        if proc.returncode != 0:
            raise StepFailed(f"{what}: {last_error_line(proc.stderr or proc.stdout)}", proc.stdout + proc.stderr)

    @property
    def _dated(self) -> DatedPackages:
        return DatedPackages(uv_command(), self._run_host)

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
        run_env = _install_env(spec, venv, python)
        build_pins = dated_build_tools(spec.exclude_newer, python.version)
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
        if not targets:
            self._sandboxed(spec.install, workspace, binds, run_env, log)
            return
        # The site keeps the variables as they are now: reading the declared requirements again
        # (phase 5) must not run under the constraints it is replacing.
        site = InstallSite(spec, venv, workspace, self.sandbox, binds, dict(run_env), log,
                           network=not self.offline, timeout=INSTALL_TIMEOUT)
        dated = dated_constraints(site, self._dated, targets, constraints)
        if dated is not None:
            run_env["PIP_CONSTRAINT"] = str(dated)
        try:
            self._sandboxed(spec.install, workspace, binds, run_env, log)
        except StepFailed as exc:
            wheels = with_wheels(site, self._dated, targets, constraints, exc.output) if dated else None
            if wheels is None:
                raise
            run_env["PIP_CONSTRAINT"] = str(wheels)
            self._sandboxed(spec.install, workspace, binds, run_env, log)

    def _sandboxed(self, commands: list[str], workspace: Path, binds: list[Any], run_env: dict[str, str],
                   log: BuildLog) -> None:

        limits = Limits(timeout=INSTALL_TIMEOUT, memory_mb=None, max_procs=None)
        for command in commands:
            log.write(f"$ (sandbox, network={not self.offline}) {command}")
            start = time.monotonic()
            result = self.sandbox.run(["bash", "-c", command], workspace=workspace, binds=binds,
                                      env=run_env, limits=limits, network=not self.offline,
                                      cwd=config.TESTBED_PATH)
            log.write(result.output)
            log.write(took(start, result.returncode))
            if result.status != "ok" or result.returncode != 0:
                detail = last_error_line(result.output) if result.output.strip() else result.reason
                raise StepFailed(f"`{command}` failed (status {result.status}, exit {result.returncode}): {detail}",
                                 result.output)


def _install_env(spec: EnvSpec, venv: Path, python: PythonInfo) -> dict[str, str]:
    """The variables the install commands run with: the env's own, pip and uv quiet and private,
    the host's network settings, and the cutoff for whatever the install pulls in."""
    run_env = Env(venv, spec, spec.env_hash(), python.version, python.prefix).run_env()
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
    return run_env
