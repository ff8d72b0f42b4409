"""RULES: turn a Diagnosis into a revised Plan, without a model.

Each rule is a function named in data/diagnose.toml's `fix` field. A rule returns a Fix (the new
plan and a one-line description) or None when it has nothing new to try; the loop never applies
the same description twice, so rules may be called again after a later change.
"""

from __future__ import annotations

import re
import sys

from issuebench.config import TESTBED_PATH
from issuebench.setup.data import canonical_name, import_to_distribution, load
from issuebench.setup.diagnose import Diagnosis
from issuebench.setup.local_modules import declared_distributions, local_top_modules, module_folders
from issuebench.setup.lockfile_pins import LOCK_NOTE, locked_versions, pinned_to_lock
from issuebench.setup.plan import (
    BUILT_INSTALL,
    DEVELOP_INSTALL,
    EDITABLE_INSTALL,
    Plan,
)
from issuebench.setup.pyversions import first_without, minor_key
from issuebench.setup.requirements import requirement_name, split_marker
from issuebench.setup.rule_base import Fix, RuleContext, apply_rule, replace_packages, rule, with_packages

# The rules that change how the suite is run live apart; importing them registers them.
from issuebench.setup.rules_test_command import CLASSIC_STYLE, switch_runner

__all__ = ["CLASSIC_STYLE", "Fix", "RuleContext", "apply_rule", "switch_runner"]

_SETUPTOOLS_STEPS = ["setuptools<58", "setuptools<50", "setuptools<45"]
_NO_ADDOPTS = '-o addopts=""'
# What setup itself installs to build and run the suite: never dropped as a test-only requirement.
_RUNNER_TOOLS = {"pytest", "setuptools", "wheel", "editables"}


@rule
def add_module(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """Install the distributions providing every missing import the log names; a module the
    repository holds in a folder goes on PYTHONPATH instead."""
    local, declared = local_top_modules(ctx.tree), declared_distributions(ctx.facts)
    stdlib = getattr(sys, "stdlib_module_names", frozenset())
    on_path = set(plan.spec.env_vars.get("PYTHONPATH", "").split(":"))
    wanted, local_missing, folders, misread = [], [], [], []
    for module in diagnosis.found.get("module", []):
        top = module.split(".")[0]
        # returns/contrib/hypothesis/ is no `import hypothesis`: its extras declare that distribution.
        skip = top in local or canonical_name(import_to_distribution(module)) in declared
        inner = [] if skip else _outside_own_package(module_folders(ctx.tree, top), ctx)
        # With those folders on the path, a submodule the folder lacks (authlib's test package
        # tests/django/, then `No module named 'django.test'`) says the folder was not the module:
        # the distribution is, and the folder comes off the path, where it hides the distribution.
        wrong = bool(inner) and "." in module and on_path.issuperset(f"{TESTBED_PATH}/{f}" for f in inner)
        misread += inner if wrong else []
        if top in local:
            local_missing.append(top)
        elif inner and not wrong:
            folders += inner
        elif top not in stdlib and not top.startswith("_"):
            wanted.append(import_to_distribution(module))
    if folders and (fix := _pythonpath_with(plan, ctx, folders)):
        return fix
    if wanted:
        unhidden = _path_without(plan, misread)
        fix = with_packages(unhidden, list(dict.fromkeys(wanted)), "missing import")
        if fix is None and unhidden is not plan:
            fix = Fix(unhidden, "installed distribution hidden by a folder of the same name")
        if fix is not None:
            if unhidden is not plan:
                fix.description += f"; off PYTHONPATH: {', '.join(dict.fromkeys(misread))}"
            return fix
    if local_missing:
        return pythonpath(diagnosis, plan, ctx)
    return None


def _outside_own_package(folders: list[str], ctx: RuleContext) -> list[str]:
    """Folders not inside the project's own package: a module there is its submodule, never a
    top-level import (authlib's authlib/integrations/django_oauth2/requests.py, taken for
    `requests` and put on the path, hid the installed requests from every test)."""
    own = (ctx.facts.name or "").lower().replace("-", "_").replace(".", "_")
    if not own:
        return folders
    return [f for f in folders if f.removeprefix("src/").split("/")[0] != own]


def _path_without(plan: Plan, folders: list[str]) -> Plan:
    """The plan with these folders of the repository taken off PYTHONPATH."""
    if not folders:
        return plan
    gone = {f"{TESTBED_PATH}/{f}" for f in folders}
    kept = [p for p in plan.spec.env_vars.get("PYTHONPATH", "").split(":") if p and p not in gone]
    env_vars = {k: v for k, v in plan.spec.env_vars.items() if k != "PYTHONPATH"}
    return plan.copy(env_vars={**env_vars, **({"PYTHONPATH": ":".join(kept)} if kept else {})})


@rule
def add_distribution(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    names = diagnosis.found.get("name", [])
    own = canonical_name(ctx.facts.name) if ctx.facts.name else None
    wanted = [n for n in names if canonical_name(n) != own]
    if not wanted and own and plan.spec.install == []:
        return _editable_again(plan)
    return with_packages(plan, wanted, "missing distribution")


@rule
def add_packages(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    return with_packages(plan, list(diagnosis.args.get("packages", [])), diagnosis.kind)


@rule
def pytest_runnable(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """No pytest command: install pytest, or when it is installed it predates the `pytest` script
    (before 3.0 it was `py.test`; requests 2.3 pins pytest 2.3.4): run it as a module."""
    fix = with_packages(plan, ["pytest"], diagnosis.kind)
    if fix is not None or plan.spec.test_cmd.split()[:1] != ["pytest"]:
        return fix
    return Fix(plan.copy(test_cmd="python -m " + plan.spec.test_cmd),
               "the installed pytest has no `pytest` script (older than 3.0): run python -m pytest")


@rule
def pin(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    return replace_packages(plan, list(diagnosis.args.get("packages", [])), diagnosis.kind)


@rule
def pin_locked_versions(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """The suite mostly failed on versions the date allowed: the repository's lockfile's instead."""
    lockfile, locked = locked_versions(ctx.tree)
    packages, pins = pinned_to_lock(plan.spec.packages, locked)
    if not pins:
        return None
    note = f"{LOCK_NOTE} {lockfile}: {', '.join(pins)}"
    return Fix(plan.copy(packages=packages, notes=[*plan.spec.notes, note]),
               f"the versions {lockfile} holds: pin {', '.join(pins)}")


@rule
def add_fixture_plugin(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    table = load("diagnose")["fixture_plugins"]
    wanted = [table[f] for f in diagnosis.found.get("fixture", []) if f in table]
    return with_packages(plan, wanted, "missing fixture plugin")


@rule
def pytest_option(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """Install the plugin behind an unknown pytest option; else run without the config's addopts."""
    table = load("diagnose")["pytest_options"]
    plugins = []
    for option in diagnosis.found.get("option", []):
        option = option.split("=")[0].strip("'\",")
        match = max((key for key in table if option == key or (option.startswith(key) and key.startswith("--"))),
                    key=len, default=None)
        if match and table[match]:
            plugins.append(table[match])
    fix = with_packages(plan, list(dict.fromkeys(plugins)), "pytest option needs a plugin")
    if fix:
        return fix
    if plan.runner == "pytest" and _NO_ADDOPTS not in plan.spec.test_cmd:
        return Fix(plan.copy(test_cmd=f"{plan.spec.test_cmd} {_NO_ADDOPTS}"),
                   "unknown pytest option: ignore the configuration's addopts")
    return None


@rule
def relax_dependencies(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """Resolution failed: drop the test-only requirements the resolver names (an optional test
    dependency with no usable release at the date must not sink the whole setup), then the
    repository's exact and upper-bound pins (the date still bounds every version), then try
    another Python."""
    named = {canonical_name(n.rstrip(".-")) for n in diagnosis.found.get("name", [])}
    # A name the registry does not know at all cannot be installed whoever asks for it (requests
    # 0.14's requirements.txt lists a private `rudolf2`).
    missing = {canonical_name(n.rstrip(".-")) for n in diagnosis.found.get("missing", [])} - _RUNNER_TOOLS
    needed = {requirement_name(r) for r in (*ctx.facts.install_requires, *ctx.facts.build_requires,
                                            *ctx.facts.setup_requires)} | _RUNNER_TOOLS
    # No release before the date (the old ones were deleted): the oldest that exists must do, for
    # what the project needs; a test-only one is dropped instead (sympy 1.12's CI job names jaxlib,
    # whose exemption drew a 2024 release that then conflicted).
    hidden = {canonical_name(n) for n in diagnosis.found.get("filtered", [])} - _RUNNER_TOOLS \
        - {canonical_name(n) for n in plan.spec.exclude_newer_exempt}
    filtered = sorted(hidden & needed)
    named |= hidden - needed
    if filtered and any(requirement_name(p) in filtered for p in plan.spec.packages):
        return Fix(plan.copy(exclude_newer_exempt=[*plan.spec.exclude_newer_exempt, *filtered]),
                   f"no release before the date: exempt {', '.join(filtered)} from the cutoff")
    drop = [p for p in plan.spec.packages if requirement_name(p) in missing or (
        requirement_name(p) in named and requirement_name(p) not in needed)]
    # A package the build takes from wheels only, with none for this Python (mysqlclient), is
    # no conflict among pins: it alone is dropped.
    wheel_less = {canonical_name(n) for n in diagnosis.found.get("nowheel", [])}
    if drop and not missing and any(_exact(p) for p in drop) and \
            not {requirement_name(p) for p in drop} <= wheel_less:
        # Exact test-only pins come from CI jobs of optional dependencies (sympy 1.9's tensorflow,
        # llvmlite, h5py, numpy of 2020); the resolver names one conflict at a time, so one
        # unresolvable among them drops them all rather than one build each.
        drop += [p for p in plan.spec.packages if p not in drop and _exact(p) and requirement_name(p) not in needed]
    if drop:
        return Fix(plan.copy(packages=[p for p in plan.spec.packages if p not in drop]),
                   f"unresolvable: drop {'unknown' if missing else 'test-only'} {', '.join(drop)}")
    ours = set(_SETUPTOOLS_STEPS) | {"cython<3"}
    relaxed = []
    for req in plan.spec.packages:
        name = requirement_name(req)
        head, marker = split_marker(req)
        if req in ours or name is None or not re.search(r"(==|<|~=|!=)", head):
            relaxed.append(req)
        else:
            bare = re.match(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?", req)
            relaxed.append((bare.group(0).strip() if bare else name) + (f"; {marker}" if marker else ""))
    if relaxed != plan.spec.packages:
        return Fix(plan.copy(packages=relaxed), "unresolvable: drop version pins and upper bounds")
    return other_python(diagnosis, plan, ctx)


def _exact(req: str) -> bool:
    return "==" in split_marker(req)[0]


# -- python -----------------------------------------------------------------------------------

def _switch_python(plan: Plan, ctx: RuleContext, candidates: list[str], why: str) -> Fix | None:
    for version in candidates:
        if version != plan.spec.python and version not in ctx.pythons_tried:
            return Fix(plan.copy(python=version), f"{why}: python {plan.spec.python} -> {version}")
    return None


def _older(plan: Plan, limit: tuple[int, int]) -> list[str]:
    return sorted((v for v in plan.pythons if minor_key(v) <= limit), key=minor_key, reverse=True)


@rule
def older_python(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    current = minor_key(plan.spec.python)
    if "max_python" in diagnosis.args:
        limit = min(minor_key(diagnosis.args["max_python"]), current)
        if limit == current:
            limit = (current[0], current[1] - 1)
    else:
        limit = (current[0], current[1] - int(diagnosis.args.get("max_python_step", 1)))
    return _switch_python(plan, ctx, _older(plan, limit), f"{diagnosis.kind} ({diagnosis.line[:80]})")


@rule
def older_python_for_module(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    module = (diagnosis.found.get("module") or [""])[0]
    first = first_without(module)
    if first is None:
        return None
    major, minor = minor_key(first)
    return _switch_python(plan, ctx, _older(plan, (major, minor - 1)),
                          f"module {module} was removed in Python {first}")


@rule
def other_python(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    current = minor_key(plan.spec.python)
    older = _older(plan, (current[0], current[1] - 1))
    newer = sorted((v for v in plan.pythons if minor_key(v) > current), key=minor_key)
    return _switch_python(plan, ctx, older + newer, "python version rejected")


# -- build ------------------------------------------------------------------------------------

@rule
def older_setuptools(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """Old build code: the pin the signature names first, then ever older setuptools."""
    current = next((p for p in plan.spec.packages if requirement_name(p) == "setuptools"), "setuptools")
    steps = [*diagnosis.args.get("packages", []), *_SETUPTOOLS_STEPS]
    bound = _upper_bound(current)
    for step in steps:
        if bound is not None and (_upper_bound(step) or 999) >= bound:
            continue            # not older than what already failed
        fix = replace_packages(plan, [step], "old build code")
        if fix and fix.description not in ctx.tried:
            return fix
    return None


def _upper_bound(req: str) -> int | None:
    match = re.search(r"<\s*(\d+)", req)
    return int(match.group(1)) if match else None


@rule
def legacy_develop(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """The backend or pip cannot make an editable install: `setup.py develop`; without setup.py,
    the project built and installed with its source first on PYTHONPATH (git-changelog in 2019:
    a poetry backend and pip 19, `File "setup.py" not found`); else PYTHONPATH alone."""
    if ctx.facts.has_setup_py and plan.spec.install != [DEVELOP_INSTALL]:
        return Fix(plan.copy(install=[DEVELOP_INSTALL]), "no PEP 660 editable: setup.py develop")
    if not ctx.facts.has_setup_py and plan.spec.install == [EDITABLE_INSTALL]:
        built = plan.copy(install=[BUILT_INSTALL])
        with_path = _pythonpath_with(built, ctx, [])
        return Fix(with_path.plan if with_path else built,
                   "no PEP 660 editable and no setup.py: install it built, its source first on PYTHONPATH")
    return pythonpath(diagnosis, plan, ctx)


@rule
def scm_version(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    env = {**plan.spec.env_vars, "SETUPTOOLS_SCM_PRETEND_VERSION": "1.0.0"}
    return Fix(plan.copy(env_vars=env), "no version from git: SETUPTOOLS_SCM_PRETEND_VERSION=1.0.0")


@rule
def pythonpath(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """Put the repository (and its src/) on PYTHONPATH, the fallback when installing it fails."""
    return _pythonpath_with(plan, ctx, [])


def _pythonpath_with(plan: Plan, ctx: RuleContext, folders: list[str]) -> Fix | None:
    """PYTHONPATH of the repository, its src/ and the given folders of it (kept from before)."""
    paths = [TESTBED_PATH] + ([f"{TESTBED_PATH}/src"] if "src" in ctx.tree.dirs() else [])
    have = plan.spec.env_vars.get("PYTHONPATH", "").split(":")
    paths += [p for p in have if p.startswith(f"{TESTBED_PATH}/") and p not in paths]
    paths += [f"{TESTBED_PATH}/{f}" for f in folders if f"{TESTBED_PATH}/{f}" not in paths]
    value = ":".join(paths)
    if plan.spec.env_vars.get("PYTHONPATH") == value:
        return None
    return Fix(plan.copy(env_vars={**plan.spec.env_vars, "PYTHONPATH": value}),
               f"local modules not importable: PYTHONPATH={value}")


def _editable_again(plan: Plan) -> Fix | None:
    return Fix(plan.copy(install=[EDITABLE_INSTALL]), "project metadata missing: install it editable")


# -- tests ------------------------------------------------------------------------------------

@rule
def collection(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """Collection failed without a named missing module: make local test helpers importable."""
    return pythonpath(diagnosis, plan, ctx)
