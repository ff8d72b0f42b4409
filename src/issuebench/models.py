"""Typed records that flow between the stages: tasks, predictions, environment specs, results.

Everything that crosses a file boundary is one of these, validated on load, so a bad row fails
with the field that is wrong instead of a KeyError deep inside a run.
"""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from issuebench import HARNESS_VERSION
from issuebench.code_digest import env_build_code


def _json_list(value: Any) -> Any:
    """Hub rows carry test lists as JSON-encoded strings; local rows as real lists."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a JSON list: {exc.msg}") from exc
        return decoded
    return value


def stable_hash(obj: Any) -> str:
    """sha256 of a canonical JSON rendering: the one way this project makes content keys."""
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hashlib.sha256(blob).hexdigest()


class StrStatus(str, Enum):
    """A status vocabulary whose members read as their values wherever text is made from them:
    f-strings, str() and JSON alike (Python 3.11 made format() of a str enum print `Class.NAME`),
    so files and messages built from a status read as the plain strings statuses once were."""

    def __str__(self) -> str:
        return str(self.value)


class TestStatus(str, Enum):
    __test__ = False  # not a pytest test class
    PASSED = "PASSED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    ERROR = "ERROR"
    XFAIL = "XFAIL"


TestStatusMap = dict[str, TestStatus]


class EnvSpec(BaseModel):
    """How to build an environment for a repository and run its tests.

    Fields that change what gets installed make up `env_hash` (the cache key of the built
    environment); the test command and parser do not, so changing them reuses the environment.
    """

    model_config = ConfigDict(extra="forbid")

    # The environment kind that builds and runs it (envs.kinds): "python" (a uv venv), "node" (a
    # Node of the task's era and the project's node_modules), "native" (Debian's toolchain).
    kind: str = "python"
    python: str = "3.11"
    # node kind: the Node release ("12.22.12") or major ("20", the newest of it) the tests run on;
    # None: from the project's engines, .nvmrc or the task's date.
    node: str | None = None
    # node kind: the package manager and its release ("npm@6.14.18", "yarn@1.22.19",
    # "pnpm@7.9.0"); None: the one the lockfile and packageManager name, of the Node's era.
    package_manager: str | None = None
    # Shell commands run in the workspace before the install (sandboxed, network allowed).
    pre_install: list[str] = Field(default_factory=list)
    # Requirement specifiers installed into the venv with uv (pins win over exclude_newer).
    packages: list[str] = Field(default_factory=list)
    # Requirement files, relative to the repository root, installed with uv.
    requirements_files: list[str] = Field(default_factory=list)
    # Commands that install the repository itself (sandboxed, network allowed), e.g.
    # "python -m pip install -e .". They run with the workspace mounted at the fixed testbed path.
    install: list[str] = Field(default_factory=list)
    # Create the venv with pip/setuptools seeded (needed by legacy `pip install -e .`).
    seed_pip: bool = True
    # Commands run per instance in the workspace before the tests (no network), e.g. build_ext.
    pre_test: list[str] = Field(default_factory=list)
    test_cmd: str = "pytest -rA"
    # How test files named by the test patch become arguments of test_cmd:
    # "paths" appends the paths, "django" turns tests/a/b.py into a.b (Django's runtests.py, run
    # from tests/), "modules" into tests.a.b (a runner that takes dotted names from the root, as
    # `python -m django test` does), "none" runs test_cmd as it is.
    test_directives: Literal["paths", "django", "modules", "none"] = "paths"
    log_parser: str = "pytest"
    # ISO date (YYYY-MM-DD or full timestamp); resolution never sees newer releases.
    exclude_newer: str | None = None
    # Where exclude_newer comes from when the spec is a recipe: the task's created_at, the
    # environment_setup_commit's date, a fixed date, or none at all.
    exclude_newer_source: Literal["created_at", "environment_setup_commit", "fixed", "none"] = "created_at"
    # Packages exempt from the cutoff because the recipe pins a release newer than the task.
    exclude_newer_exempt: list[str] = Field(default_factory=list)
    env_vars: dict[str, str] = Field(default_factory=dict)
    # Tasks of this spec talk to the internet in their tests; offline they get status needs_network.
    needs_network: bool = False
    # Tests of the repository known to fetch from the internet (p5.js's loadJSON example): a run
    # whose only failing graded tests are among them gets status needs_network, never resolved.
    # An entry ending in `*` names every test whose id begins with the rest (a file's tests).
    network_tests: list[str] = Field(default_factory=list)
    # Debian packages the environment needs from the system (shared libraries that conda would
    # have brought along); `issuebench envs system-deps` installs them, the build checks them.
    system_packages: list[str] = Field(default_factory=list)
    # Where the build steps and the test command come from: this recipe, or the row's own
    # eval_script when it has one (harness/eval_script.py reads it).
    commands_from: Literal["recipe", "row"] = "recipe"
    # Literal replacements in the row's build steps and test command, for what only the
    # reference's image has ({"su chromeuser -c " = "bash -c "}).
    script_rewrites: dict[str, str] = Field(default_factory=dict)
    # Git submodules a fetched snapshot lacks: folder -> "owner/name", filled per workspace from
    # that repository's local clone at the commit the base commit records (harness/submodules.py).
    submodules: dict[str, str] = Field(default_factory=dict)
    # Processes and threads a test run may hold at once, where a suite needs more than the
    # sandbox's default (micropython's thread tests); None keeps the default.
    max_procs: int | None = None
    notes: list[str] = Field(default_factory=list)

    def env_hash(self) -> str:
        keys = ("python", "pre_install", "packages", "requirements_files", "install", "seed_pip",
                "exclude_newer", "exclude_newer_exempt")
        # The build rules are part of what an env is: a change to how envs are dated or installed
        # must not hand out an env built under the old rules.
        fields: dict[str, Any] = {"rules": env_build_code(), **{k: getattr(self, k) for k in keys}}
        if self.has_conda_files():
            fields["conda_files_era"] = "pins"   # dated by the recipe's pins since rules 3 (dated_packages.conda_era)
        if self.kind != "python":
            # Only other kinds carry these keys: a Python spec is hashed from the same fields as before.
            fields.update(kind=self.kind, node=self.node, package_manager=self.package_manager,
                          system_packages=sorted(self.system_packages))
        return stable_hash(fields)[:16]

    def has_conda_files(self) -> bool:
        """Whether a requirement file is a conda environment file (translated to pip names)."""
        return any(alt.strip().endswith((".yml", ".yaml")) for entry in self.requirements_files
                   for alt in entry.split("|"))

    def content_hash(self) -> str:
        return stable_hash(self.model_dump(mode="json"))[:16]


class Task(BaseModel):
    """One SWE-bench instance, field for field, plus optional newer and issuebench fields."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    instance_id: str
    repo: str
    base_commit: str
    patch: str = ""
    test_patch: str = ""
    problem_statement: str = ""
    hints_text: str = ""
    created_at: str | None = None
    version: str | None = None
    environment_setup_commit: str | None = None
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    # Newer rows.
    image: str | None = None
    eval_script: str | None = None
    log_parser: str | None = None
    eval_type: Literal["pass_and_fail", "fail_only"] | None = None
    difficulty: str | None = None
    # issuebench: the row's own environment recipe.
    env: EnvSpec | None = None

    _as_list = field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")(_json_list)

    @field_validator("created_at", "version", mode="before")
    @classmethod
    def _stringify(cls, value: Any) -> Any:
        return None if value is None else str(value)

    @field_validator("env", mode="before")
    @classmethod
    def _env_from_json(cls, value: Any) -> Any:
        if isinstance(value, str):
            return json.loads(value) if value.strip() else None
        return value

    def content_hash(self) -> str:
        return stable_hash(self.model_dump(mode="json"))[:16]


class Prediction(BaseModel):
    model_config = ConfigDict(extra="allow")

    instance_id: str
    model_name_or_path: str = "unknown"
    model_patch: str | None = None
    cost: float | None = None
    usage: dict[str, Any] | None = None

    @field_validator("model_name_or_path", mode="before")
    @classmethod
    def _model_default(cls, value: Any) -> Any:
        return "unknown" if value in (None, "") else value

    @property
    def is_empty(self) -> bool:
        return self.model_patch is None or not self.model_patch.strip()

    @property
    def model_dir_name(self) -> str:
        return self.model_name_or_path.replace("/", "__")

    def patch_hash(self) -> str:
        return stable_hash(self.model_patch or "")[:16]


class PatchStatus(str, Enum):
    EMPTY = "empty"
    INVALID = "invalid"
    DOES_NOT_APPLY = "does-not-apply"
    APPLIED = "applied"
    APPLIED_AFTER_REPAIR = "applied-after-repair"


class InstanceStatus(str, Enum):
    """Our finer statuses: every instance gets exactly one, with a reason."""

    RESOLVED = "resolved"
    UNRESOLVED = "unresolved"
    EMPTY = "empty"
    INVALID_PATCH = "invalid_patch"
    APPLY_FAILED = "apply_failed"
    # The task's own test patch does not apply: a fault of the task, not of the prediction.
    TEST_PATCH_FAILED = "test_patch_failed"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    PROCESS_LIMIT = "process_limit"
    OUTPUT_LIMIT = "output_limit"
    FILE_LIMIT = "file_limit"
    LOG_UNPARSEABLE = "log_unparseable"
    ENV_FAILED = "env_failed"
    SANDBOX_FAILED = "sandbox_failed"
    NEEDS_NETWORK = "needs_network"
    # The environment needs a package registry this machine cannot reach (Go, Rust, Java, PHP,
    # Ruby rows here); the reason names it.
    NEEDS_REGISTRY = "needs_registry"
    # The worker running the instance (a Ray process or node) died, after the bounded retries.
    WORKER_LOST = "worker_lost"
    ERROR = "error"

    @property
    def completed(self) -> bool:
        """Completed in the reference's sense: tests ran and a report exists."""
        return self in (InstanceStatus.RESOLVED, InstanceStatus.UNRESOLVED)


class Outcome(str, Enum):
    """The SWE-bench paper's categories for an applied patch (Appendix C.5)."""

    RESOLVED = "Resolved"
    BREAKING_RESOLVED = "Breaking Resolved"
    PARTIALLY_RESOLVED = "Partially Resolved"
    WORK_IN_PROGRESS = "Work in Progress"
    NO_OP = "No-Op"
    REGRESSION = "Regression"


class ListResult(BaseModel):
    success: list[str] = Field(default_factory=list)
    failure: list[str] = Field(default_factory=list)


class TestsStatus(BaseModel):
    __test__: ClassVar[bool] = False  # not a pytest test class

    FAIL_TO_PASS: ListResult = Field(default_factory=ListResult)
    PASS_TO_PASS: ListResult = Field(default_factory=ListResult)
    FAIL_TO_FAIL: ListResult = Field(default_factory=ListResult)
    PASS_TO_FAIL: ListResult = Field(default_factory=ListResult)


class Grade(BaseModel):
    tests_status: TestsStatus
    resolved: bool
    # "full" | "partial" | "no": the reference's resolution level.
    resolution: Literal["full", "partial", "no"]
    outcome: Outcome
    strict_flags: list[str] = Field(default_factory=list)
    # Why the log was not believed (an exit status it does not explain, the runner's own report
    # contradicting it): each withholds `resolved` in every mode.
    untrusted: list[str] = Field(default_factory=list)


class InstanceReport(BaseModel):
    """Everything known about one graded instance; `to_reference()` gives report.json's shape."""

    instance_id: str
    model_name_or_path: str
    status: InstanceStatus
    reason: str = ""
    patch_is_None: bool = False
    patch_exists: bool = True
    patch_successfully_applied: bool = False
    patch_status: PatchStatus | None = None
    apply_method: str | None = None
    resolved: bool = False
    tests_status: TestsStatus | None = None
    outcome: Outcome | None = None
    env_hash: str | None = None
    exclude_newer: str | None = None
    python: str | None = None
    cache_key: str | None = None
    harness_version: str = HARNESS_VERSION
    durations: dict[str, float] = Field(default_factory=dict)
    # Exit status of the test command, when it ran (strict regrading uses it).
    returncode: int | None = None
    cost: float | None = None
    repo: str | None = None
    notes: list[str] = Field(default_factory=list)

    def to_reference(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "patch_is_None": self.patch_is_None,
            "patch_exists": self.patch_exists,
            "patch_successfully_applied": self.patch_successfully_applied,
            "resolved": self.resolved,
        }
        if self.tests_status is not None:
            body["tests_status"] = self.tests_status.model_dump()
        return {self.instance_id: body}
