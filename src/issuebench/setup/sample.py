"""Judge an attempt on a sample of a large suite's test files, then confirm once on more.

Running the whole of a large suite (sympy's takes over an hour on two cores) for every attempt
makes setup useless; whether an environment works shows in any spread of test files. An attempt
runs a sample spread over the suite's folders; once it passes, one confirmation run on a larger
sample decides. The recipe's suite command still names the whole suite.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from issuebench.setup.extract import Facts
from issuebench.setup.log_regex import compile_log_pattern
from issuebench.setup.plan import _TAKES_VALUE, Plan
from issuebench.setup.source import SourceTree

# A suite with more test files than this is judged on samples.
LARGE_SUITE_FILES = 60
SAMPLE_FILES = 20
CONFIRM_FILES = 40
# pytest's default python_files patterns.
_TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
# Folders of files that tests use as input, not tests (a directory walk would skip them through
# norecursedirs or conftest's collect_ignore; naming a file explicitly does not).
_NOT_TESTS = {"example_scripts", "examples", "fixtures", "data", "testdata", "test_data", "resources",
              "roots", "samples", "node_modules", "build", "dist", ".tox", ".git", "venv", ".venv"}


# A suite of few files may still hold many slow tests (seaborn's): past this many collected
# tests, attempts run a sample of test ids instead.
LARGE_SUITE_TESTS = 600
SAMPLE_TESTS = 200
CONFIRM_TESTS = 400
# Ids safe to pass back to pytest: parameters of word characters only, no spaces (any other id
# may not be found again, and one id not found stops the whole run).
_PLAIN_ID = compile_log_pattern(r"^[\w/.-]+\.py::[\w:]+(\[[\w.-]+\])?$", multiline=False)
# A line of a collect-only run that lists a test id.
_LISTED_ID = compile_log_pattern(r"^\S+\.py::\S", multiline=False)


@dataclass(frozen=True)
class Sample:
    files: list[str]            # the files (or test ids) this run covers
    total: int                  # test files (or collected tests) in the whole suite
    unit: str = "test files"

    def describe(self) -> str:
        return f"{len(self.files)} of {self.total} {self.unit}"


def suite_files(plan: Plan, facts: Facts, tree: SourceTree) -> list[str]:
    """The test files the plan's whole-suite run would collect (pytest runner only)."""
    if plan.runner != "pytest":
        return []
    roots = [a.rstrip("/") for a in _paths(plan.test_args)] or \
        [p.rstrip("/") for p in facts.pytest_testpaths if p] or [""]
    skip = [g.rstrip("/") for g in facts.pytest_norecurse]
    ignored = _ignored(plan.test_args)
    out = []
    for path in tree.files():
        if not _TEST_FILE.search(path) or "/site-packages/" in path or ignored(path):
            continue
        folders = path.split("/")[:-1]
        if _NOT_TESTS.intersection(folders) or any(
                fnmatch.fnmatch(part, glob) or fnmatch.fnmatch("/".join(folders[:i + 1]), glob)
                for glob in skip for i, part in enumerate(folders)):
            continue
        if any(not root or path == root or path.startswith(root + "/") for root in roots):
            out.append(path)
    return out


def _ignored(args: list[str]) -> Callable[[str], bool]:
    """Whether a path falls under the suite's `--ignore` / `--ignore-glob` options. pytest honours
    them only while it walks folders: a file named on the command line runs anyway, so a sample
    must not name one (zarr's own command ignores its benchmarks, which fill 4 GiB)."""
    plain: list[str] = []
    globs: list[str] = []
    words = iter(args)
    for word in words:
        name, _, value = word.partition("=")
        if name in ("--ignore", "--ignore-glob"):
            value = value or next(words, "")
            (plain if name == "--ignore" else globs).append(value.rstrip("/").removeprefix("./"))

    def ignored(path: str) -> bool:
        return any(path == p or path.startswith(p + "/") for p in plain if p) or \
            any(fnmatch.fnmatch(path, g) for g in globs if g)
    return ignored


def counted_here(statuses: dict, tree: SourceTree) -> dict:
    """Only results whose test file is in the repository: a suite that runs pytest inside its tests
    (pytest's own) prints its inner sessions' `PASSED test_a.py` lines too, and those are not its
    tests. Results of another shape (unittest's) are kept as they are."""
    files = set(tree.files())
    mine = {t: s for t, s in statuses.items() if t.split("::", 1)[0] in files}
    return mine if mine else statuses


def pick(files: list[str], count: int, offset: int = 0) -> list[str]:
    """`count` files spread evenly over the sorted list (every k-th), starting at `offset`,
    so every part of the suite (every subpackage's tests) is represented."""
    ordered = sorted(files)
    if len(ordered) <= count:
        return ordered
    step = len(ordered) / count
    return [ordered[min(len(ordered) - 1, int(i * step + offset) % len(ordered))] for i in range(count)]


def plan_samples(plan: Plan, facts: Facts, tree: SourceTree) -> tuple[Sample, Sample] | None:
    """(the sample each attempt runs, the larger confirmation sample), or None for a small suite."""
    files = suite_files(plan, facts, tree)
    if len(files) <= LARGE_SUITE_FILES:
        return None
    first = pick(files, SAMPLE_FILES)
    # The confirmation covers files the first sample did not, plus the first sample itself.
    more = list(dict.fromkeys([*first, *pick(files, CONFIRM_FILES - SAMPLE_FILES, offset=1)]))
    return Sample(first, len(files)), Sample(more, len(files))


def collect_command(plan: Plan) -> str:
    """The whole-suite command, collecting only: it lists test ids quickly (and shows an import
    error of the test modules without running anything)."""
    quiet = "-qq" if " -v" in f" {plan.spec.test_cmd} " else "-q"     # -v -q would cancel out
    return f"{plan.suite_command} --collect-only {quiet}"


def id_samples(log: str) -> tuple[Sample, Sample] | None:
    """Samples of test ids for a suite whose collection listed many tests, else None."""
    ids = [line.strip() for line in log.splitlines() if _LISTED_ID.match(line.strip())]
    plain = [i for i in ids if _PLAIN_ID.match(i)]
    if len(ids) <= LARGE_SUITE_TESTS or len(plain) < SAMPLE_TESTS:
        return None
    first = pick(plain, SAMPLE_TESTS)
    more = list(dict.fromkeys([*first, *pick(plain, CONFIRM_TESTS - SAMPLE_TESTS, offset=1)]))
    return Sample(first, len(ids), "tests"), Sample(more, len(ids), "tests")


def sample_command(plan: Plan, sample: Sample) -> str:
    """The plan's suite command restricted to the sample's files (its options kept)."""
    options = _options(plan.test_args)
    # One unimportable file must not hide the others' results: it counts as one error.
    keep_going = ["--continue-on-collection-errors"]
    return " ".join([plan.spec.test_cmd, *(shlex.quote(a) for a in [*options, *keep_going, *sample.files])])


def _paths(args: list[str]) -> list[str]:
    return [a for a, is_path in _classify(args) if is_path]


def _options(args: list[str]) -> list[str]:
    return [a for a, is_path in _classify(args) if not is_path]


def _classify(args: list[str]) -> list[tuple[str, bool]]:
    """Each suite argument with whether it is a path (an option's value is not)."""

    out: list[tuple[str, bool]] = []
    value_next = False
    for arg in args:
        if value_next:
            out.append((arg, False))
            value_next = False
        elif arg.startswith("-"):
            out.append((arg, False))
            value_next = "=" not in arg and arg in _TAKES_VALUE
        else:
            out.append((arg, True))
    return out


# pytest runs nothing when one id among its arguments matches no test (a parametrization whose id
# differs between the collect-only run and this one: astropy 1.3's `[None-fill-True-True]`).
_NOT_FOUND = compile_log_pattern(r"^ERROR: not found: (\S+::\S.*?)\s*$")


# An id in a module that failed to collect: pytest stops the whole run, whatever
# --continue-on-collection-errors says (python-statemachine's Django module without its settings).
# Written to stderr, it can land inside stdout's "collecting ... " line.
_NO_COLLECTORS = compile_log_pattern(r"(?:^|\s)ERROR: found no collectors for (\S+::\S.*?)\s*$")


def without_unfound_ids(command: str, log: str) -> str | None:
    """The command without the test ids pytest said it could not find, or None when none of its
    arguments is one. An id of a module that failed to collect gives way to the module's path, so
    that its error still counts, once, and the other ids run."""
    unfound = _NOT_FOUND.findall(log)      # absolute paths: under the workspace's mount point
    broken = _NO_COLLECTORS.findall(log)
    if not unfound and not broken:
        return None
    args = shlex.split(command)

    def named(arg: str, name: str) -> bool:
        return name == arg or name.endswith("/" + arg)

    # pytest 3 names the whole id; later ones name it without its parametrization, and then
    # every parametrization of that test goes (which of them it could not find, it does not say).
    kept = [a for a in args if not any(named(a, u) or ("[" not in u and named(a.split("[", 1)[0], u))
                                       for u in unfound)]
    modules: set[str] = set()
    instead: list[str] = []
    for arg in kept:
        module = arg.split("::", 1)[0]
        if not any(named(arg, b) for b in broken):
            instead.append(arg)
        elif module not in modules:
            modules.add(module)
            instead.append(module)
    kept = instead
    return " ".join(shlex.quote(a) for a in kept) if kept != args else None
