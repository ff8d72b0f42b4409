"""Facts -> a first `Plan`: the EnvSpec to build and the command that runs the whole suite."""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field

from issuebench.config import TESTBED_PATH
from issuebench.models import EnvSpec
from issuebench.setup.coverage_gate import coverage_threshold
from issuebench.setup.cython_sources import CYTHON, cythonize_commands, missing_cython_outputs
from issuebench.setup.data import canonical_name
from issuebench.setup.exit_first import NO_MAXFAIL, stops_at_first_failure
from issuebench.setup.extract import Facts
from issuebench.setup.facts import split_command
from issuebench.setup.offline_switch import marker_option, offline_markers, offline_switch, without_markers
from issuebench.setup.requirements import evaluate_markers, merge, requirement_extras, requirement_name
from issuebench.setup.source import SourceTree
from issuebench.tomlcompat import tomllib

EDITABLE_INSTALL = "python -m pip install --no-deps --no-build-isolation -e ."
# A project without setup.py whose pip or backend predates editable installs (PEP 660): built and
# installed for its metadata, with its source put first on PYTHONPATH so that a patch takes effect.
BUILT_INSTALL = "python -m pip install --no-deps --no-build-isolation ."
PYTEST_CMD = "pytest -rA"
UNITTEST_CMD = "python -m unittest -v"
# Django's runner from the root: test labels are dotted module names (it refuses file paths).
DJANGO_CMD = "python -m django test -v 2 --noinput"
# Build helpers that the legacy setup.py path needs in the venv (no build isolation).
_SETUPTOOLS_BUILD = ["setuptools", "wheel"]
_NEVER_INSTALL = {"pytest-runner", "pip", "distribute", "setuptools-git"}


@dataclass
class Plan:
    """One candidate setup: the spec plus what the loop needs to run and revise it."""

    spec: EnvSpec
    runner: str                              # "pytest" | "unittest" | "django"
    test_args: list[str] = field(default_factory=list)   # appended to test_cmd for the full suite
    pythons: list[str] = field(default_factory=list)     # candidate Pythons, preferred first
    origin: str = "extracted"
    unittest_pattern: str | None = None       # discovery's file pattern, when not its test*.py

    @property
    def suite_command(self) -> str:
        if self.runner == "unittest":
            # Only a start folder carries over to unittest discovery; pytest options do not.
            start = ["-s", self.test_args[0], "-t", "."] if self.test_args and not \
                self.test_args[0].startswith("-") else []
            pattern = ["-p", shlex.quote(self.unittest_pattern)] if self.unittest_pattern else []
            return " ".join(["python -m unittest discover -v", *start, *pattern])
        if self.runner == "django":
            # A folder label is discovered (test*.py below it); pytest options do not carry over.
            return " ".join([self.spec.test_cmd, *(shlex.quote(a) for a in self.test_args[:1] if not a.startswith("-"))])
        return " ".join([self.spec.test_cmd, *(shlex.quote(a) for a in self.test_args)])

    def built_spec(self) -> EnvSpec:
        """The spec as built and recorded: requirement markers evaluated for the plan's Python."""
        return self.spec.model_copy(update={"packages": evaluate_markers(self.spec.packages, self.spec.python)},
                                    deep=True)

    def copy(self, **changes: object) -> Plan:
        spec_changes = {k: v for k, v in changes.items() if k in EnvSpec.model_fields}
        rest = {k: v for k, v in changes.items() if k not in EnvSpec.model_fields}
        return Plan(spec=self.spec.model_copy(update=spec_changes, deep=True),
                    runner=str(rest.get("runner", self.runner)),
                    test_args=list(rest.get("test_args", self.test_args)),  # type: ignore[call-overload]
                    pythons=list(self.pythons), origin=str(rest.get("origin", self.origin)),
                    unittest_pattern=self.unittest_pattern)


def initial_plan(facts: Facts, tree: SourceTree, *, date: str | None, pythons: list[str]) -> Plan:
    """The plan the repository's own files suggest."""
    self_name = canonical_name(facts.name) if facts.name else None
    build: list[str] = []
    if facts.has_pyproject_build:
        build += facts.build_requires
        if (facts.build_backend or "").startswith("hatchling"):
            build.append("editables")    # hatchling's editable hook; no build isolation installs it
        if "setuptools" in (facts.build_backend or "setuptools") and not any(
                requirement_name(r) == "setuptools" for r in build):
            build += _SETUPTOOLS_BUILD
    elif facts.has_setup_py:
        build += _SETUPTOOLS_BUILD
    if facts.old_build and any("2to3" in note for note in facts.old_build):
        build = [r for r in build if requirement_name(r) != "setuptools"] + ["setuptools<58"]
    runtime = _expand_self(facts.install_requires, facts, self_name)
    tests = _expand_self(facts.all_test_requirements(), facts, self_name)
    runner = choose_runner(facts)
    if runner == "pytest":
        tests.append("pytest")
    helper_build, helper_installs = local_package_installs(facts, tree)
    packages = merge(build, facts.setup_requires, runtime, tests, helper_build,
                     drop=[*_NEVER_INSTALL, *([self_name] if self_name else [])], keep=runtime)
    installable = facts.has_setup_py or facts.has_pyproject_build
    env_vars = {} if installable else {"PYTHONPATH": _pythonpath(tree)}
    generated = missing_cython_outputs(tree) if installable else []
    if generated and not any(canonical_name(requirement_name(p) or "") == CYTHON for p in packages):
        packages.append(CYTHON)
    network = offline_markers(facts, tree) if runner == "pytest" else []
    test_fields, runner_vars, runner_notes = _test_fields(runner, facts, tree, network)
    spec = EnvSpec(
        python=pythons[0] if pythons else "3.11",
        packages=packages,
        pre_install=cythonize_commands(generated),
        install=[*(_install_commands(facts, date) if installable else []), *helper_installs],
        **test_fields,
        exclude_newer=date,
        exclude_newer_source="fixed" if date else "none",
        env_vars={**facts.test_env, **env_vars, **runner_vars},
        # A patch to the .pyx reaches the tests only through its .c, made again before the rebuild.
        pre_test=[*(rebuild_before_tests(tree, generated) if installable else []),
                  *(f"python {script} >/dev/null 2>&1 || true" for script in facts.test_prepare)],
        notes=[f"setup: {note}" for note in facts.notes[:5]] + runner_notes,
        submodules=dict(facts.submodule_repos),
    )
    return Plan(spec=spec, runner=runner, test_args=_also_left_out(suite_paths(facts, tree, runner), network),
                pythons=pythons, unittest_pattern=facts.unittest_pattern)


def _test_fields(runner: str, facts: Facts, tree: SourceTree,
                 network: list[str]) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """The spec's test command, parser and directives for the runner, the variables the runner
    needs, and what to say of the command's options; `network`: the suite's markers for tests that
    need the network, left out."""
    if runner == "django":
        settings = {"DJANGO_SETTINGS_MODULE": facts.django_settings} if facts.django_settings else {}
        if facts.django_path:
            # As its manage.py runs: that folder first on the path, labels named from it.
            settings["PYTHONPATH"] = f"{TESTBED_PATH}/{facts.django_path}"
        directives = "django" if facts.django_path == "tests" else "modules"
        return {"test_cmd": DJANGO_CMD, "log_parser": "django", "test_directives": directives}, settings, []
    if runner != "pytest":
        return {"test_cmd": UNITTEST_CMD, "log_parser": "unittest"}, {}, []
    gate = coverage_threshold(tree)
    exits = stops_at_first_failure(tree)
    offline = offline_switch(tree)
    notes = ([f"setup: a coverage threshold in {gate} fails any run of a task's few test files: tests run "
              "with --no-cov"] if gate else []) \
        + ([f"setup: {exits} stop at the first failure: tests run with {NO_MAXFAIL}"] if exits else []) \
        + ([f"setup: the suite's conftest offers {offline} for a run without the network: on"] if offline else []) \
        + ([f"setup: the suite marks tests that need the network ({', '.join(network)}): left out"] if network else [])
    command = PYTEST_CMD + (" --no-cov" if gate else "") + (f" {NO_MAXFAIL}" if exits else "") \
        + (f" {offline}" if offline else "") + (f" {marker_option(network)}" if network else "")
    return {"test_cmd": command, "log_parser": "pytest"}, {}, notes


# The environment's editable install compiled the base commit's extensions in place; a patch that
# changes their C sources (every simplejson task changes _speedups.c) is compiled before its tests,
# or they run the old code. Failing to compile leaves the old build (and the pure-Python fallback).
REBUILD_EXTENSIONS = "python setup.py build_ext --inplace -q >/dev/null 2>&1 || true"
_EXTENSION = re.compile(r"\bExtension\(|\bext_modules\s*=")


# A project whose own pyproject backend cythonizes and compiles at install (propcache, whose
# in-tree backend wraps setuptools) has no setup.py to build in place: the editable install is
# made again, which compiles the patched .pyx into the workspace before it installs.
REINSTALL = f"{EDITABLE_INSTALL} >/dev/null 2>&1 || true"


def rebuild_before_tests(tree: SourceTree, generated: list[str]) -> list[str]:
    """What compiles a patched extension source before the tests (none: a pure-Python project)."""
    if builds_extensions(tree):
        return [*(f"{c} >/dev/null 2>&1 || true" for c in cythonize_commands(generated)), REBUILD_EXTENSIONS]
    if not tree.exists("setup.py") and any(path.endswith(".pyx") for path in tree.files()):
        return [REINSTALL]
    return []


def builds_extensions(tree: SourceTree) -> bool:
    """Does setup.py compile extension modules (setuptools' Extension, ext_modules)?"""
    text = tree.read("setup.py") if tree.exists("setup.py") else None
    return bool(text and _EXTENSION.search(text))


DEVELOP_INSTALL = "python setup.py develop --no-deps"
# pip learnt --no-build-isolation in 10.0 (2018-04-14); an env dated before that seeds an older pip,
# so a setup.py project of that time goes straight to `setup.py develop` (one build saved).
PIP_NO_BUILD_ISOLATION_SINCE = "2018-04-14"


def _install_commands(facts: Facts, date: str | None) -> list[str]:
    if facts.has_setup_py and not facts.has_pyproject_build and date and date < PIP_NO_BUILD_ISOLATION_SINCE:
        return [DEVELOP_INSTALL]
    return [EDITABLE_INSTALL]


def local_package_installs(facts: Facts, tree: SourceTree) -> tuple[list[str], list[str]]:
    """(build requirements, install commands) of the repository's own helper packages that its
    test dependencies name by folder (`facts.local_packages`): each installed from its folder,
    editable, without build isolation (the build has no index), so its backend is installed first."""
    build: list[str] = []
    commands: list[str] = []
    for path in dict.fromkeys(facts.local_packages):
        folder = path.removeprefix("./")
        pyproject = tree.read(f"{folder}/pyproject.toml")
        if pyproject is None and not tree.exists(f"{folder}/setup.py"):
            continue
        try:
            requires = tomllib.loads(pyproject).get("build-system", {}).get("requires", []) if pyproject else []
        except tomllib.TOMLDecodeError:
            requires = []
        build += [r for r in requires if isinstance(r, str)] or _SETUPTOOLS_BUILD
        # Editable, so that a patch to the package (a uv workspace member's code) takes effect;
        # a backend without editable installs gets a plain one.
        commands.append(f"python -m pip install --no-deps --no-build-isolation -e {shlex.quote(path)} || "
                        f"python -m pip install --no-deps --no-build-isolation {shlex.quote(path)}")
    return build, commands


def choose_runner(facts: Facts) -> str:
    """pytest whenever the repository mentions it; Django's runner when its own test command is
    that, with a settings module; unittest when it only knows test_suite/unittest."""
    if facts.uses_pytest:
        return "pytest"
    if facts.runs_django_tests:
        return "django"
    if facts.unittest_suite or any("unittest" in c for c in facts.test_commands):
        return "unittest"
    return "pytest"


# Options of a repository's own pytest command worth keeping for the whole-suite run: they decide
# what is collected. Values of options that take one are never mistaken for paths.
_KEEP_FLAGS = {"--doctest-modules", "--doctest-continue-on-failure"}
_KEEP_WITH_VALUE = {"--ignore", "--ignore-glob", "--deselect", "--doctest-glob", "-p", "-m", "--import-mode",
                    "--rootdir", "--confcutdir"}
_TAKES_VALUE = _KEEP_WITH_VALUE | {"-k", "-c", "--cov", "--cov-report", "--junitxml", "--junit-xml", "-n",
                                   "--numprocesses", "--dist", "--basetemp", "--tb", "-W", "-o", "--maxfail",
                                   "--timeout", "--durations", "--cov-config", "--log-level"}


def suite_paths(facts: Facts, tree: SourceTree, runner: str) -> list[str]:
    """Arguments of the whole-suite run: the test paths and collection options of the repository's
    pytest command that covers the most test files (the first of equals: tox before CI before
    docs; a CI job that runs only the remote-data tests must not narrow the suite), unless it
    covers under half of the test files, else the test folder (none with testpaths)."""
    dirs = tree.dirs()
    test_files = [p for p in tree.files() if re.search(r"(^|/)(test_[^/]*|[^/]*_test)\.py$", p)]
    best: tuple[int, list[str], list[str]] | None = None
    parsed = [words for c in facts.test_commands if runner == "pytest"
              if (words := _pytest_words(c, dirs, tree)) is not None]
    # A command that picks tests by marker (anndata's GPU job: `pytest -m "array_api or gpu"`) runs
    # a part of the suite; it stands for the suite only when no other pytest command does.
    for paths, options in [p for p in parsed if marker_selection(p[1]) is None] or parsed:
        if paths and all(_not_recursed(path, facts.pytest_norecurse) for path in paths):
            continue    # a suite of its own (Radicale's browser tests: `pytest integ_tests`)
        covered = len(test_files) if not paths else sum(
            1 for f in test_files if any(f == p or f.startswith(p + "/") for p in paths))
        if best is None or covered > best[0]:
            best = (covered, paths, options)
    if best is not None and test_files and best[0] * 2 < len(test_files):
        # python-multipart's only pytest line is its benchmarks' CI job (`pytest
        # tests/test_benchmarks.py --codspeed`): one test file of three is no whole suite.
        best = None
    if best is not None and (best[1] or best[2]):
        return best[1] + best[2]            # no paths: the repository runs pytest from its root
    if runner == "pytest" and facts.pytest_testpaths:
        return []
    return _test_folder(dirs)


def marker_selection(options: list[str]) -> slice | None:
    """Where pytest's options keep only the tests of some marker (`-m gpu`, `-m "a or b"`), rather
    than leave some out (`-m "not slow"`); None when they do not."""
    found = _marker_option(options)
    return found[1] if found and not re.search(r"\bnot\b", found[0]) else None


def _marker_option(options: list[str]) -> tuple[str, slice] | None:
    """The expression of pytest's `-m` option and where it stands (the last one: it is the one
    pytest keeps), or None."""
    found = None
    for i, word in enumerate(options):
        if word == "-m" and i + 1 < len(options):
            found = options[i + 1], slice(i, i + 2)
        elif word.startswith("-m="):
            found = word[3:], slice(i, i + 1)
    return found


def _also_left_out(options: list[str], markers: list[str]) -> list[str]:
    """The suite's options, whose own `-m` (after the test command's, so it is the one pytest keeps)
    also leaves out the tests of `markers`."""
    found = _marker_option(options)
    if not markers or found is None or any(re.search(rf"\b{m}\b", found[0]) for m in markers):
        return options
    options = list(options)
    options[found[1]] = ["-m", without_markers(found[0], markers)]
    return options


def _not_recursed(path: str, norecursedirs: list[str]) -> bool:
    """Is `path` in a folder the pytest configuration tells pytest never to walk into?"""
    return any(fnmatch.fnmatchcase(part, glob.rstrip("/")) for part in path.split("/") for glob in norecursedirs)


def _pytest_words(command: str, dirs: set[str], tree: SourceTree) -> tuple[list[str], list[str]] | None:
    """(paths, kept options) of a pytest command line, or None when it runs no pytest."""
    if not re.search(r"py\.?test", command):
        return None
    words = split_command(command)
    start = next((i for i, w in enumerate(words) if re.search(r"py\.?test$", w)), None)
    if start is None:
        return None
    paths: list[str] = []
    options: list[str] = []
    rest = iter(words[start + 1:])
    for word in rest:
        if word in ("&&", "||", ";", "|"):
            break
        name = word.split("=", 1)[0]
        if word.startswith("-"):
            value = None if "=" in word or name not in _TAKES_VALUE else next(rest, None)
            if name in _KEEP_FLAGS or name in _KEEP_WITH_VALUE:
                options += [word] + ([value] if value is not None else [])
        elif word.rstrip("/") in dirs or (tree.exists(word) and word.endswith(".py")):
            # A file of another kind (tqdm's tests_notebook.ipynb, for nbval) is a plugin's input:
            # that command does not run the suite.
            paths.append(word.rstrip("/"))
    return paths, options


def _test_folder(dirs: set[str]) -> list[str]:
    for candidate in ("tests", "test", "testing", "src/tests"):
        if candidate in dirs:
            return [candidate]
    return []


def _expand_self(reqs: list[str], facts: Facts, self_name: str | None, depth: int = 0) -> list[str]:
    """Replace `project[extra]` (an extra naming the project itself) by that extra's requirements."""
    out: list[str] = []
    for req in reqs:
        if self_name and requirement_name(req) == self_name:
            if depth < 4:
                for extra in requirement_extras(req):
                    out += _expand_self(facts.extras.get(extra, []), facts, self_name, depth + 1)
            continue
        out.append(req)
    return out


def _pythonpath(tree: SourceTree) -> str:

    return f"{TESTBED_PATH}/src" if "src" in tree.dirs() else TESTBED_PATH
