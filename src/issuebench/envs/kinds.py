"""Environment kinds: what a language needs to build an environment and to run one task in it.

A kind is a plug-in chosen by data (`EnvSpec.kind`, from a recipe or the row's own `env`), so a
new language is a new module and one line in `KINDS`, not edits across the harness:

    class EnvKind(Protocol):
        name: str
        def ensure(self, spec, workspace) -> BuiltEnv            # built once per hash, shared
        def prepare_run(self, env, workspace) -> RunPreparation  # per run: binds, variables, notes
        # optional: prepare_patched_run(env, workspace, prep) once the patches are in, and
        # after_run(env, workspace, pristine) -> log lines, for what a run leaves the next ones

Every kind is made with the run's EnvBuilder (`KindHost`): one cache root, one sandbox, one
offline and rebuild setting for all of them. Built environments are content-addressed under that
root like the Python ones (`<hash>/env.json` last), built under the hash's file lock, and a failed
build is recorded so later instances fail fast (kind_cache.build_once).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from issuebench.errors import IssuebenchError
from issuebench.models import EnvSpec
from issuebench.sandbox import Bind


class BuiltEnv(Protocol):
    """What the harness reads of a built environment, whatever its kind."""

    path: Path
    spec: EnvSpec
    env_hash: str
    manifest: dict[str, Any]

    def binds(self) -> list[Bind]: ...

    def run_env(self) -> dict[str, str]: ...


class KindHost(Protocol):
    """The run's EnvBuilder as the kinds see it."""

    root: Path
    sandbox: Any
    offline: bool

    def wants_rebuild(self, env_hash: str) -> bool: ...

    def claim_rebuild(self, env_hash: str) -> bool: ...


@dataclass
class RunPreparation:
    """What one run needs beyond the environment: more binds, the full variables, what to say."""

    binds: list[Bind]
    env: dict[str, str]
    notes: list[str] = field(default_factory=list)   # into the result's notes
    log: list[str] = field(default_factory=list)     # into the instance log only


class EnvKind(Protocol):
    name: str

    def ensure(self, spec: EnvSpec, workspace: Path) -> BuiltEnv: ...

    def prepare_run(self, env: Any, workspace: Path) -> RunPreparation: ...


def plain_preparation(env: BuiltEnv) -> RunPreparation:
    """The preparation of a kind that needs nothing per run: the env's own binds and variables."""
    return RunPreparation(binds=env.binds(), env=env.run_env())


class UnknownKind(IssuebenchError):
    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"unknown environment kind {name!r} (EnvSpec field `kind`)",
                         hint=f"use one of: {', '.join(known)}")
