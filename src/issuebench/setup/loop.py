"""Setup's one entry point, `setup_repository`, in phases:

survey (open the source, settle the date, extract facts, rank Pythons) -> the candidate recipes
(remembered recipes of nearby commits first, then the extracted plan) -> the search
(setup.search: build, judge, diagnose, fix, up to `max_iterations` builds) -> the result (the
accepted attempt's recipe, or the best one with why it fell short), remembered when accepted.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from issuebench.envs import install_command, last_error_line, unknown_packages
from issuebench.errors import IssuebenchError
from issuebench.models import EnvSpec
from issuebench.setup.extract import Facts, extract
from issuebench.setup.judging import MIN_TESTS
from issuebench.setup.lockfile_pins import repinned_to_lock
from issuebench.setup.memory import RecipeMemory
from issuebench.setup.model import ModelClient
from issuebench.setup.offline_tests import debian_package
from issuebench.setup.plan import Plan, initial_plan
from issuebench.setup.pyversions import installed_minors, rank_pythons, released_by, satisfies
from issuebench.setup.runner import FILE_BUDGET, Progress, Run, Runner
from issuebench.setup.search import Attempt, Limits, Search
from issuebench.setup.source import SourceTree
from issuebench.setup.wheel_python import with_wheel_python

# Defaults that end a setup within minutes on any repository: seconds one test run may take, and
# seconds after which no attempt starts and a running test run is cut.
TEST_TIMEOUT = 600.0
TIME_LIMIT = 1200.0


@dataclass
class SetupResult:
    success: bool
    repo: str
    commit: str | None
    date: str | None
    spec: EnvSpec | None
    runner: str | None
    test_args: list[str]
    suite_command: str | None
    tests_run: int
    tests_passed: int
    failing_tests: list[str]
    attempts: list[Attempt]
    seconds: float
    reason: str = ""
    # Failing tests whose reports show they reached for the internet: not counted against the
    # environment (they are among failing_tests too, which tasks built on the recipe exclude).
    offline_tests: list[str] = field(default_factory=list)
    tests_skipped: int = 0
    unimportable_modules: list[str] = field(default_factory=list)
    files_cut: list[str] = field(default_factory=list)
    judged_on: str = ""
    # Tests left out because they need what this machine lacks (a server program, a locale), in
    # one phrase naming it and how to get it ("" if none).
    lacking_system: str = ""

    @property
    def iterations(self) -> int:
        return len(self.attempts)

    @property
    def python(self) -> str | None:
        """The Python of a Python environment (None for a node or native one, which has none)."""
        return self.spec.python if self.spec and self.spec.kind == "python" else None

    def summary(self) -> dict[str, Any]:
        """The one JSON object `issuebench setup --format json` prints."""
        return {
            "success": self.success, "repo": self.repo, "commit": self.commit, "date": self.date,
            "python": self.python, "iterations": self.iterations, "seconds": round(self.seconds, 2),
            "tests_run": self.tests_run, "tests_passed": self.tests_passed,
            "tests_skipped": self.tests_skipped, "modules_unimportable": len(self.unimportable_modules),
            "files_cut": self.files_cut, "judged_on": self.judged_on,
            "tests_offline": len(self.offline_tests), "lacking_system": self.lacking_system,
            "reason": self.reason, "recipe": self.recipe(),
        }

    def recipe(self) -> dict[str, Any]:
        """The recipe document: the EnvSpec, how the suite ran, failing tests, every attempt."""
        return {
            "repo": self.repo, "commit": self.commit, "date": self.date, "accepted": self.success,
            "env": self.spec.model_dump(mode="json") if self.spec else None,
            "suite_command": self.suite_command, "test_args": self.test_args,
            "tests_run": self.tests_run, "tests_passed": self.tests_passed, "tests_skipped": self.tests_skipped,
            "unimportable_modules": self.unimportable_modules, "files_cut": self.files_cut,
            "judged_on": self.judged_on,
            "failing_tests": self.failing_tests, "offline_tests": self.offline_tests,
            "attempts": [{k: v for k, v in asdict(a).items() if v not in (None, "", [], {})} for a in self.attempts],
        }


def setup_repository(src: str | Path, *, commit: str | None = None, date: str | None = None,
                     max_iterations: int = 4, model: str | ModelClient | None = None,
                     threshold: float = 0.95, builder: Any = None, sandbox: Any = None,
                     memory: RecipeMemory | bool | None = True, repo_name: str | None = None,
                     test_timeout: float = TEST_TIMEOUT, work_dir: Path | None = None,
                     progress: Progress | None = None, file_budget: float = FILE_BUDGET,
                     time_limit: float | None = TIME_LIMIT, min_tests: int = MIN_TESTS) -> SetupResult:
    """Find how to install and test a repository at a commit (or a source folder at a date).

    `progress`, when given, receives a line whenever an attempt moves on and every few seconds
    while its tests run. Each test file of a judging run may take `file_budget` seconds (a file
    cut for time neither passes nor fails the environment), each test run `test_timeout`, and no
    attempt starts, nor test run goes on, past `time_limit` seconds from the start.
    """
    started = time.monotonic()
    deadline = started + time_limit if time_limit else None
    survey = _survey(src, commit, date, repo_name)
    tree, when, repo = survey.tree, survey.when, survey.repo
    if not has_tests(tree, survey.facts):
        return SetupResult(False, repo, tree.commit, when, None, None, [], None, 0, 0, [], [],
                           time.monotonic() - started,
                           reason="no tests in the source (no test_*.py, *_test.py or tests/ folder)")
    client = ModelClient.from_arg(model) if isinstance(model, str) else model
    store = RecipeMemory() if memory is True else (memory or None)
    queue = _candidates(survey, store)
    runner = Runner(builder, sandbox, test_timeout, work_dir, tree, progress, file_budget=file_budget,
                    deadline=deadline)
    search = Search(runner, tree, survey.facts, queue, client,
                    Limits(max_iterations, threshold, min_tests, time_limit, deadline))
    try:
        search.run()
    finally:
        runner.close()
    result = _result(repo, tree, when, search.attempts, search.best, threshold, store, started)
    if search.timed_out and not result.success:
        result.reason = f"time limit of {time_limit:g}s reached; {result.reason}"
    return result


@dataclass
class _Survey:
    tree: SourceTree
    when: str | None       # the cutoff for every package (never before the commit)
    repo: str
    facts: Facts
    pythons: list[str]     # best first


def _survey(src: str | Path, commit: str | None, date: str | None, repo_name: str | None) -> _Survey:
    """The source at the commit, the date that bounds its packages, what its files say, and the
    Pythons to try (raises when this machine has none)."""
    tree = SourceTree.open(src, commit)
    when = normalise_date(date or tree.date())
    committed = normalise_date(tree.date()) if tree.commit else None
    facts = extract(tree)
    if when and committed and committed > when:
        # A task's date can precede its base commit (SWE-bench's created_at is the pull request's
        # opening; its base may be rebased later: astroid 2.12's by 244 days). The commit's files
        # ask for what existed when it was made, which an earlier cutoff hides.
        facts.notes.insert(0, f"--date {when[:10]} precedes the commit ({committed[:10]}): "
                              "the commit's date is the cutoff")
        when = committed
    if tree.missing_files():
        facts.notes.insert(0, f"{len(tree.missing_files())} files absent from the clone, left out of the workspace: "
                              + ", ".join(tree.missing_files()[:3]))
    pythons = rank_pythons(facts.requires_python, facts.ci_pythons, facts.classifier_pythons, when,
                           installed_minors())
    if not pythons:
        raise IssuebenchError("no Python interpreter found", hint="install one (pyenv or `uv python install`)")
    return _Survey(tree, when, repo_name or tree.repo_name(), facts, pythons)


def _candidates(survey: _Survey, store: RecipeMemory | None) -> list[Plan]:
    """Remembered recipes of nearby commits first, then the plan extracted from this commit's files."""
    remembered = _remembered_plans(store, survey.repo, survey.when, survey.facts, survey.pythons,
                                   survey.tree) if store else []
    extracted = initial_plan(survey.facts, survey.tree, date=survey.when, pythons=survey.pythons)
    return [*remembered, with_wheel_python(extracted)]


_TEST_FILE = re.compile(r"(^|/)(tests?|testing)/.*\.py$|(^|/)(test_[^/]*|[^/]*_test|tests?)\.py$")


def has_tests(tree: SourceTree, facts: Facts) -> bool:
    """Does the snapshot hold anything a test runner could collect? (Many sdists ship no tests.)"""
    if any(_TEST_FILE.search(path) for path in tree.files()):
        return True
    return any("doctest" in command for command in facts.test_commands)


def _failure_named(attempt: Attempt) -> str:
    """The attempt's diagnosed kind, or for a failure no signature knows its log's last error line."""
    if attempt.error_kind:
        return attempt.error_kind
    return f"unknown error: {last_error_line(attempt.error)}" if attempt.error.strip() else "unknown error"


def _result(repo: str, tree: SourceTree, when: str | None, attempts: list[Attempt],
            best: tuple[Run, Plan, str] | None, threshold: float, store: RecipeMemory | None,
            started: float) -> SetupResult:
    success = bool(attempts) and attempts[-1].stage == "accepted"
    if best is None:
        last = attempts[-1] if attempts else None
        return SetupResult(False, repo, tree.commit, when, EnvSpec.model_validate(last.spec) if last else None,
                           None, [], None, 0, 0, [], attempts, time.monotonic() - started,
                           reason=f"no attempt ran the tests ({_failure_named(last)})" if last else "")
    run, plan, judged_on = best
    refused = next((a.refusal for a in reversed(attempts) if a.refusal and a.tests_passed == run.passed), "")
    reason = "" if success else (f"best attempt passed {run.passed}/{len(run.counted)} tests "
                                 f"({refused or f'needs {threshold:.0%}'})")
    # The whole log of the best run: an attempt's excerpt may stop before the file's name.
    told = f"{attempts[-1].error or ''}\n{run.log}"
    lacking = [p for p in tree.missing_files() if p.rsplit("/", 1)[-1] in told] if not success else []
    if not success and lacking:
        # astropy 5.2 reads eopc04.1962-now (over 4 MiB, left out of the fetched snapshot) when its
        # conftest imports iers, then tries to download it: a fault of the clone, not the environment.
        reason = (f"the clone lacks {', '.join(lacking[:2])}, which the tests read (a snapshot that left out "
                  f"large files; clone the full repository); {reason}")
    elif not success and run.lacking_clone:
        # tinycss2: its one test module reads the css-parsing-tests submodule; nothing else is judged.
        wanted = ", ".join(r.replace("/", "__") for r in plan.spec.submodules.values()) or "its repository"
        reason = (f"{', '.join(run.lacking_clone[:3])} could not import for want of a git submodule the clone "
                  f"lacks; a clone of {wanted} beside this one fills it; {reason}")
    elif not success and attempts[-1].error_kind == "needs_network":
        reason = f"the tests need the internet, which the sandbox does not give; {reason}"
    lacking = _lacking_system(run)
    if not success and lacking:
        reason = f"{lacking}; {reason}"
    spec = plan.built_spec()
    if run.failing:
        spec.notes = [*spec.notes, f"setup: {len(run.failing)} tests fail in this environment "
                                   "(listed in the recipe's failing_tests)"]
    if run.lacking_clone:
        spec.notes = [*spec.notes, f"setup: {', '.join(run.lacking_clone)} could not import for want of a git "
                                   "submodule the clone lacks: left out of the judgement"]
    offline = run.offline
    if offline:
        spec.notes = [*spec.notes, f"setup: {len(offline)} of them fail only for want of the internet, "
                                   "which the sandbox does not give; not counted against the environment "
                                   "(the recipe's offline_tests)"]
    if lacking:
        spec.notes = [*spec.notes, f"setup: {lacking}: not counted against the environment"]
    if success and store is not None:
        store.save(repo, tree.commit, when, plan.spec, plan.runner, plan.test_args, len(run.counted), run.passed)
    return SetupResult(success, repo, tree.commit, when, spec, plan.runner, plan.test_args, plan.suite_command,
                       len(run.counted), run.passed, run.failing, attempts, time.monotonic() - started, reason,
                       offline_tests=offline, tests_skipped=len(run.skipped),
                       unimportable_modules=run.import_failed, files_cut=run.cut_files, judged_on=judged_on,
                       lacking_system=lacking)


def _lacking_system(run: Run) -> str:
    """What the tests that fail for want of a server program or a locale need, in one phrase
    ("" if none)."""
    said = []
    programs = run.lacking_program
    if programs:
        names = sorted(set(programs.values()))
        said.append(f"{len(programs)} tests fail only because they start {', '.join(names)}, which this "
                    f"machine lacks ({_install_advice(names)})")
    locales = run.lacking_locale
    if locales:
        said.append(f"{len(locales)} tests fail only because the locale they set is not on this machine "
                    "(`locale.Error: unsupported locale setting`; the Debian package locales and "
                    "`locale-gen` of the locale they name bring it)")
    return "; ".join(said)


def _install_advice(programs: list[str]) -> str:
    """How to get the programs: the apt command for the packages this machine's Debian release has,
    and a word for those it has not (an apt command naming an unknown package installs nothing)."""
    packages = sorted({debian_package(p) for p in programs} - {""})
    unknown = unknown_packages(packages)
    installable = [p for p in packages if p not in unknown]
    said = []
    if installable:
        said.append(f"install the Debian package(s) {', '.join(installable)}: {install_command(installable)}")
    if unknown:
        said.append(f"{', '.join(unknown)}: not a package of this machine's Debian release")
    unpackaged = [p for p in programs if not debian_package(p)]
    if unpackaged:
        said.append(f"{', '.join(unpackaged)}: no Debian package, install it by other means")
    return "; ".join(said)


def _remembered_plans(store: RecipeMemory, repo: str, when: str | None, facts: Facts,
                      pythons: list[str], tree: SourceTree) -> list[Plan]:
    """Recipes of nearby commits, adapted: the new date, and a Python that fits this commit."""
    plans = []
    for item in store.nearest(repo, when, limit=1):
        python = item.spec.python
        if python not in pythons or not released_by(python, when) or not all(
                satisfies(python, r) for r in facts.requires_python):
            python = pythons[0]
        packages = repinned_to_lock(item.spec.packages, item.spec.notes, tree)
        spec = item.spec.model_copy(update={"exclude_newer": when, "python": python, "packages": packages},
                                    deep=True)
        plans.append(Plan(spec=spec, runner=item.runner, test_args=item.test_args, pythons=pythons,
                          origin=f"memory ({item.commit[:12] or item.date})"))
    return plans


def normalise_date(value: str | None) -> str | None:
    """An ISO date or timestamp as UTC `YYYY-MM-DDTHH:MM:SSZ` (what uv's --exclude-newer takes)."""
    if not value:
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            parsed = dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)
        else:
            parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=dt.timezone.utc)
    except ValueError:
        raise IssuebenchError(f"--date {value!r} is not an ISO date",
                              hint="use YYYY-MM-DD or a full ISO timestamp") from None
    return parsed.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
