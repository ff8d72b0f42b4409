"""Kinds for languages whose packages come from a registry this machine kind may not reach:
Go (the Go module proxy), Rust (the crates registry), Java (Maven Central), PHP (Packagist,
through composer) and Ruby (RubyGems, through bundler).

The path is the same as for every kind, up to the registry: the toolchain is looked for, then the
project's dependencies are fetched once per (recipe, lock file) in the sandbox with the network
on. When the toolchain is missing, or the fetch fails to reach the registry, the build raises
RegistryUnreachable naming the registry, and the instance's status is `needs_registry` (never a
bare env_failed). Where the registry answers, the fetched dependencies are the environment (its
caches bound into each run, with the network off) and the row's own commands run.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench import config
from issuebench.envs import cache
from issuebench.envs.build_log import BuildLog, EnvBuildError, StepFailed, last_error_line
from issuebench.envs.kind_cache import build_once
from issuebench.envs.kinds import RunPreparation, plain_preparation
from issuebench.models import EnvSpec, stable_hash
from issuebench.sandbox import Bind, Limits

FETCH_TIMEOUT = 3600.0
# What a client prints when it cannot reach its registry (name resolution, refused, offline).
_UNREACHABLE = re.compile(r"(?i)(could not resolve|temporary failure in name resolution|name or service not known|"
                          r"network is unreachable|connection refused|failed to connect|could not connect|"
                          r"no such host|dial tcp|timed out|unable to access|couldn't resolve|getaddrinfo|"
                          r"failed to download|could not transfer artifact|SocketError)")


@dataclass(frozen=True)
class Language:
    name: str
    registry: str                      # said in the status; never a host name
    programs: tuple[str, ...]          # the toolchain it needs on PATH
    debian: tuple[str, ...]            # Debian's packages for that toolchain
    lockfiles: tuple[str, ...]
    fetch: str                         # the command that fetches the dependencies
    cache_vars: dict[str, str]         # variable -> value; "{env}" is the env's folder (what was fetched)


LANGUAGES: dict[str, Language] = {
    "go": Language("go", "the Go module proxy", ("go",), ("golang-go",), ("go.sum", "go.mod"),
                   "go mod download", {"GOMODCACHE": "{env}/gomod", "GOPATH": "{env}/gopath"}),
    "rust": Language("rust", "the Rust crate registry", ("cargo",), ("cargo",), ("Cargo.lock", "Cargo.toml"),
                     "cargo fetch", {"CARGO_HOME": "{env}/cargo"}),
    "java": Language("java", "Maven Central", ("java",), ("default-jdk", "maven"),
                     ("pom.xml", "build.gradle", "build.gradle.kts", "build.xml"),
                     "if [ -f pom.xml ]; then mvn -B -q dependency:go-offline; "
                     "elif [ -x ./gradlew ]; then ./gradlew --no-daemon dependencies; else ant -p; fi",
                     {"MAVEN_OPTS": "-Dmaven.repo.local={env}/m2", "GRADLE_USER_HOME": "{env}/gradle"}),
    "php": Language("php", "Packagist (composer)", ("php", "composer"), ("php-cli", "composer"),
                    ("composer.lock", "composer.json"), "composer install --no-interaction --no-scripts",
                    {"COMPOSER_HOME": "{env}/composer"}),
    "ruby": Language("ruby", "RubyGems (bundler)", ("ruby", "bundle"), ("ruby", "ruby-bundler"),
                     ("Gemfile.lock", "Gemfile"), "bundle install", {"BUNDLE_PATH": "{env}/bundle"}),
}


class RegistryUnreachable(EnvBuildError):
    """The environment needs a registry this machine cannot reach (status needs_registry)."""

    def __init__(self, env_hash: str, language: Language, detail: str) -> None:
        super().__init__(env_hash, f"needs {language.registry}, which this machine cannot reach ({detail})",
                         hint=f"run {language.name} rows on a machine that reaches {language.registry}")
        self.registry = language.registry


@dataclass
class RegistryEnv:
    path: Path
    spec: EnvSpec
    env_hash: str
    language: Language
    manifest: dict[str, Any] = field(default_factory=dict)

    def binds(self) -> list[Bind]:
        return [Bind(self.path)]

    def run_env(self) -> dict[str, str]:
        env = {"PATH": f"{self.path / 'cargo' / 'bin'}:/usr/local/bin:/usr/bin:/bin"}
        env.update({var: value.replace("{env}", str(self.path)) for var, value in self.language.cache_vars.items()})
        # The run has no network: the clients answer from what was fetched.
        env.update({"GOPROXY": "off", "CARGO_NET_OFFLINE": "true"})
        env.update(self.spec.env_vars)
        return env


class RegistryKind:
    """One kind per language (LANGUAGES); `name` is the language's."""

    language: Language

    def __init__(self, host: Any) -> None:
        self.host = host

    @property
    def name(self) -> str:
        return self.language.name

    def env_hash(self, spec: EnvSpec, workspace: Path) -> str:
        locks = {n: hashlib.sha256((workspace / n).read_bytes()).hexdigest()
                 for n in self.language.lockfiles if (workspace / n).is_file()}
        return stable_hash([spec.env_hash(), locks])[:16]

    def ensure(self, spec: EnvSpec, workspace: Path) -> RegistryEnv:
        env_hash = self.env_hash(spec, workspace)
        missing = [p for p in self.language.programs if shutil.which(p) is None]
        if missing:
            raise RegistryUnreachable(env_hash, self.language,
                                      f"and its toolchain is not installed: {', '.join(missing)}; "
                                      f"Debian: {' '.join(self.language.debian)}")

        def load(manifest: dict[str, Any]) -> RegistryEnv:
            return RegistryEnv(cache.env_path(self.host.root, env_hash), spec, env_hash, self.language, manifest)

        try:
            return build_once(self.host, env_hash, spec.model_dump(mode="json"), load,
                              lambda path, log: self._fetch(spec, env_hash, path, Path(workspace), log))
        except EnvBuildError as exc:
            if isinstance(exc, RegistryUnreachable) or not _UNREACHABLE.search(exc.reason):
                raise
            raise RegistryUnreachable(env_hash, self.language, exc.reason) from None

    def prepare_run(self, env: Any, workspace: Path) -> RunPreparation:
        return plain_preparation(env)

    def _fetch(self, spec: EnvSpec, env_hash: str, path: Path, workspace: Path, log: BuildLog) -> dict[str, Any]:
        if self.host.offline:
            raise StepFailed(f"offline: {self.language.registry} could not be reached")
        env = RegistryEnv(path, spec, env_hash, self.language)
        run_env = {k: v for k, v in env.run_env().items() if k not in ("GOPROXY", "CARGO_NET_OFFLINE")}
        path.mkdir(parents=True, exist_ok=True)
        for command in [*spec.pre_install, *(spec.install or [self.language.fetch])]:
            log.write(f"$ (sandbox, network=True) {command}")
            result = self.host.sandbox.run(["bash", "-c", command], workspace=workspace,
                                           binds=[Bind(path, writable=True)], env=run_env,
                                           limits=Limits(timeout=FETCH_TIMEOUT, memory_mb=None, max_procs=None),
                                           network=True, cwd=config.TESTBED_PATH)
            log.write(result.output)
            if result.status != "ok" or result.returncode != 0:
                raise StepFailed(f"`{command}` failed (exit {result.returncode}): {last_error_line(result.output)}")
        return {"kind": self.language.name, "registry": self.language.registry}


def registry_kind(language: str) -> type[RegistryKind]:
    """The kind class for one language of LANGUAGES."""
    return type(f"{language.title()}Kind", (RegistryKind,), {"language": LANGUAGES[language]})
