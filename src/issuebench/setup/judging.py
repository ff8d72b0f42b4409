"""Judge an attempt: build the plan, run the suite (or samples of a large one) and read results.

A large suite is judged on a sample of its files or test ids and, when the sample passes, once on
a larger one in the same environment. Judging runs are verbose and go on past collection errors,
so a run the timeout cuts still counts what finished; an old pytest's refusals of those options
and ids it cannot find get a second run without them.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from issuebench.models import TestStatus
from issuebench.setup.diagnose import Diagnosis
from issuebench.setup.extract import Facts
from issuebench.setup.log_regex import compile_log_pattern
from issuebench.setup.plan import Plan
from issuebench.setup.runner import Run, Runner
from issuebench.setup.sample import (
    SAMPLE_FILES,
    Sample,
    collect_command,
    counted_here,
    id_samples,
    pick,
    plan_samples,
    sample_command,
    suite_files,
    without_unfound_ids,
)
from issuebench.setup.source import SourceTree


def judge_attempt(runner: Runner, plan: Plan, facts: Facts, tree: SourceTree,
                  threshold: float, *, confirm_on_more: bool = True) -> tuple[Run, str]:
    """Build the plan and judge it: the whole suite, or for a large suite a sample of its files and,
    when the sample passes (and confirm_on_more), one confirmation run on a larger sample in the
    same environment."""
    run, judged_on = _judge_attempt(runner, plan, facts, tree, threshold, confirm_on_more)
    leave_out_absent_submodules(run, facts.absent_submodules, tree)
    return run, judged_on


def _judge_attempt(runner: Runner, plan: Plan, facts: Facts, tree: SourceTree,
                   threshold: float, confirm_on_more: bool = True) -> tuple[Run, str]:
    built, failed = runner.build(plan)
    if built is None:
        assert failed is not None
        return failed, ""
    samples = plan_samples(plan, facts, tree)
    if samples is None and plan.runner == "pytest":
        samples = id_samples(runner.test(built, plan, collect_command(plan), "collecting").log)
    if samples is None:
        # A module that cannot be imported (a docs conf.py, say) does not hide the others' results.
        command = plan.suite_command + (KEEP_GOING if plan.runner == "pytest" else "")
        run = judge(runner, built, plan, command, "whole suite", tree)
        files = suite_files(plan, facts, tree)
        run.defined_tests = defined_tests(built.workspace, files or unittest_files(tree, plan.unittest_pattern))
        if run.statuses or "\n[timeout]" not in run.log or len(files) <= SAMPLE_FILES // 2:
            return run, ""
        # The whole suite outran the test timeout before printing a result: judge a few files.
        sample = Sample(pick(files, SAMPLE_FILES // 2), len(files))
        run = judge(runner, built, plan, sample_command(plan, sample), f"sample of {sample.describe()}", tree)
        run.defined_tests = defined_tests(built.workspace, sample.files)
        return run, f"{sample.describe()} (the whole suite timed out)"
    first, confirm = samples
    run = judge(runner, built, plan, sample_command(plan, first), f"sample of {first.describe()}", tree)
    run.defined_tests = _defined_in(built.workspace, first)
    leave_out_absent_submodules(run, facts.absent_submodules, tree)
    if first.unit == "tests":
        run = in_their_files(runner, built, plan, run, tree, threshold)
    if refusal(run, threshold) is not None or confirm.files == first.files:
        return run, first.describe()
    if not confirm_on_more:
        return run, f"{first.describe()} (a remembered recipe: confirmed where it was accepted)"
    return _confirm(runner, built, plan, first, confirm, run, tree, threshold)


# At most this many files are run again whole for the failing tests of a sample of test ids.
FILES_AGAIN = 10


def in_their_files(runner: Runner, built: Any, plan: Plan, run: Run, tree: SourceTree, threshold: float) -> Run:
    """The run of a sample of test ids that would be refused, its failing tests judged again in
    their files run whole (a run accepted as it is stays as it is).

    A test picked alone misses what the tests before it in its module did: dynaconf's CLI tests
    read the files earlier ones wrote, so 11 of a sample's 200 ids failed, and all pass in their
    files. Such a failure says nothing about the environment, and a task runs whole files. A test
    that fails in its file as well stays failing; tests the second run adds are not counted."""
    files = list(dict.fromkeys(t.split("::", 1)[0] for t in run.failing if "::" in t))[:FILES_AGAIN]
    if not files or refusal(run, threshold) is None:
        return run
    again = judge(runner, built, plan, sample_command(plan, Sample(files, len(files))),
                  f"{len(run.failing)} failing tests again in their {len(files)} files", tree)
    passing = (TestStatus.PASSED, TestStatus.XFAIL)
    now_passing = {t: again.statuses[t] for t in run.failing if again.statuses.get(t) in passing}
    if not now_passing:
        return run
    return replace(run, log=f"{run.log}\n{again.log}", statuses={**run.statuses, **now_passing})


# unittest discovery's default pattern, test*.py.
_UNITTEST_FILE = re.compile(r"(^|/)test[^/]*\.py$")


def unittest_files(tree: SourceTree, pattern: str | None) -> list[str]:
    """The files unittest discovery would import: its default test*.py, or the repository's pattern."""
    if pattern:
        return [p for p in tree.files() if fnmatch.fnmatch(p.rsplit("/", 1)[-1], pattern)]
    return [p for p in tree.files() if _UNITTEST_FILE.search(p)]
# A test function or method as written (parametrization and classes can only add to the count).
_TEST_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+test", re.MULTILINE)


def defined_tests(workspace: Path, files: list[str]) -> int:
    """How many test functions the files define: a suite of three tests cannot show five."""
    total = 0
    for path in files:
        try:
            total += len(_TEST_DEF.findall((workspace / path).read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return total


def _defined_in(workspace: Path, sample: Sample) -> int:
    if sample.unit == "tests":
        return len(sample.files)         # test ids: each is one test
    return defined_tests(workspace, sample.files)


# pytest's closing line; one longer than the terminal has no `=` fill (sympy 1.2: " 178 passed, ...
# 1 error in 73.92 seconds ").
_PASSED_SUMMARY = compile_log_pattern(r"^=+ .*\b\d+ passed\b|^ *(?:\d+ \w+, )*\d+ passed\b[^\n]* in [\d.]+ ?s")


_ANSI = compile_log_pattern(r"\x1b\[[0-9;]*m")


def quiet_pytest(run: Run, plan: Plan) -> Diagnosis | None:
    """Tests passed but no passing per-test line was parsed: the configuration forces colour codes
    into the log (`--color=yes` in addopts), or an old pytest ignores the A of -rA. Its skip and
    failure lines may still parse (pytest 3.2's `SKIP [1] ...`, dateutil 2.8: 188 passed, counted
    as 0 of 0 with 7 skipped), so only a passing result rules it out."""
    plain = _ANSI.sub("", run.log)
    match = _PASSED_SUMMARY.search(plain)
    passing = (TestStatus.PASSED, TestStatus.XFAIL)
    if run.stage != "test" or any(s in passing for s in run.statuses.values()) or plan.runner != "pytest" \
            or not match:
        return None
    fix = "colour_off" if plain != run.log and "--color=no" not in plan.spec.test_cmd else "verbose_pytest"
    return Diagnosis(kind="test_command_wrong", fix=fix, line=match.group(0)[:200], excerpt=match.group(0))


KEEP_GOING = " --continue-on-collection-errors"


def judge(runner: Runner, built: Any, plan: Plan, command: str, what: str, tree: SourceTree) -> Run:
    """Run a judging command; a pytest older than 3.0 does not know --continue-on-collection-errors,
    so it runs again without it, and ids pytest cannot find (it then runs nothing) are left out
    of a second run. Only results of the repository's own test files count."""
    if plan.runner == "pytest" and " -v" not in f" {command} ":
        command += " -v"        # one line per test as it ends: a run cut by the timeout still counts
    run = runner.test(built, plan, command, what, per_file=True)
    refused = ("unrecognized arguments", "no such option")    # argparse's words, and optparse's (pytest 2)
    if KEEP_GOING in command and any(w in run.log for w in refused) and KEEP_GOING.strip() in run.log:
        command = command.replace(KEEP_GOING, "")
        run = runner.test(built, plan, command, what, per_file=True)
    # Nothing ran but modules that failed to import: an id pytest could not find stopped the run.
    trimmed = without_unfound_ids(command, run.log) if not run.counted else None
    if trimmed is not None:
        run = runner.test(built, plan, trimmed, what, per_file=True)
    if plan.runner == "pytest":
        verbose = {m.group(1): TestStatus(m.group(2)) for m in _VERBOSE_LINE.finditer(_ANSI.sub("", run.log))
                   if m.group(1).split("::", 1)[0] not in run.cut_files}
        if not run.statuses and ("\n[timeout]" in run.log or "\n[output_limit]" in run.log):
            run.statuses = verbose        # a run cut short: what finished before the cut
        else:
            # -rA's summary names no skipped test (`SKIPPED [2] file:line: reason`); -v's lines do,
            # and skipped tests are counted: a suite that mostly skips does not show an environment.
            run.statuses.update({t: s for t, s in verbose.items() if s == TestStatus.SKIPPED and t not in run.statuses})
        run.statuses = counted_here(run.statuses, tree)
    return run


def leave_out_absent_submodules(run: Run, submodules: list[str], tree: SourceTree | None = None) -> None:
    """Test modules that fail to collect for want of a submodule the clone lacks are the clone's
    fault: left out of the judgement and named, like a file cut for time. Either the collection
    error names a path under the submodule (tomlkit's toml-test suite), or the module raises its
    own error and its source names a path under the submodule in a string (referencing's
    `Path(...) / "suite/tests"`, then `raise SuiteNotFound()`)."""
    if not submodules:
        return
    for module in list(run.import_failed):
        start = run.log.find(f"ERROR collecting {module}")
        if start < 0:
            continue
        end = run.log.find("\n____", start + 1)
        report = run.log[start:end if end > 0 else start + 20000]
        named = any(f"{path}/" in report or report.rstrip().endswith(path) for path in submodules)
        if named or _source_names_a_submodule(tree, module, submodules):
            del run.statuses[module]
            run.lacking_clone.append(module)


def _source_names_a_submodule(tree: SourceTree | None, module: str, submodules: list[str]) -> bool:
    text = tree.read(module) if tree is not None else None
    return bool(text) and any(re.search(r"""["']""" + re.escape(path) + "/", text or "") for path in submodules)


# `path::test PASSED  [ 10%]`: pytest -v's line for a finished test.
_VERBOSE_LINE = compile_log_pattern(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL)\b")


def _confirm(runner: Runner, built: Any, plan: Plan, first: Sample, confirm: Sample,
             first_run: Run, tree: SourceTree, threshold: float) -> tuple[Run, str]:
    """Judge the larger sample by running only what the first run did not: its results stand, and a
    file the first run cut for time would only be cut again (apscheduler's database tests wait
    on servers that are not there: three minutes a run, twice)."""
    extra = _not_yet_run(first, confirm, first_run.cut_files)
    if not extra:
        return first_run, confirm.describe()
    more = Sample(extra, confirm.total, confirm.unit)
    run = judge(runner, built, plan, sample_command(plan, more), f"confirming on {confirm.describe()}", tree)
    if not run.statuses:
        # The larger run broke down (a timeout, say): the first sample alone does not decide.
        run.defined_tests = _defined_in(built.workspace, more)
        return run, f"{confirm.describe()}; the confirmation run reported no test"
    merged = Run(stage=run.stage, log=f"{first_run.log}\n{run.log}",
                 statuses={**first_run.statuses, **run.statuses},
                 cut_files=list(dict.fromkeys([*first_run.cut_files, *run.cut_files])),
                 lacking_clone=list(dict.fromkeys([*first_run.lacking_clone, *run.lacking_clone])))
    merged.defined_tests = _defined_in(built.workspace, Sample([*first.files, *extra], confirm.total, confirm.unit))
    if confirm.unit == "tests":
        merged = in_their_files(runner, built, plan, merged, tree, threshold)
    return merged, confirm.describe()


def _not_yet_run(first: Sample, confirm: Sample, cut_files: list[str]) -> list[str]:
    """The confirmation sample's files or test ids that the first run neither ran nor cut for time."""
    done, cut = set(first.files), set(cut_files)
    return [item for item in confirm.files if item not in done and item.split("::", 1)[0] not in cut]


# pytest-cov's fail-under message: the run exits 1 whatever its tests did.
COVERAGE_FAILURE = compile_log_pattern(r"Coverage failure: total of \S+ is less than fail-under|"
                                       r"FAIL Required test coverage of")
# An attempt is judged on at least this many tests that ran (neither skipped nor cut for time):
# a handful passing says little about an environment.
MIN_TESTS = 5
# Over this share of the collected tests skipped, the tests that matter did not run (optional
# dependencies missing, a platform guard): the environment is not accepted on the rest.
MAX_SKIPPED_SHARE = 0.5


# The error pytest shows for a test module it could not import (its `E   ` line), bounded in length.
_IMPORT_ERROR = compile_log_pattern(r"^E\s+(\w*(?:Error|Exception)\b[^\n]{0,160})")


_MISSING_MODULE = compile_log_pattern(r"^E\s+(ModuleNotFoundError: No module named '[\w.]{1,120}')")


def first_import_error(log: str) -> str | None:
    """The first error pytest printed for a test module it could not import, so a refusal says
    what to fix (a missing distribution, a module the repository expects elsewhere)."""
    start = log.find("ImportError while importing test module")
    if start < 0:
        start = log.find("ERROR collecting")
    found = _IMPORT_ERROR.search(log[start:]) if start >= 0 else None
    return found.group(1).strip() if found else None


def import_errors(log: str, limit: int = 50) -> str:
    """The error of each test module pytest could not import, and every missing module a failing
    test's own report names, a line each. A long log's tail, which diagnosis reads, holds only the
    short summary, where a name is cut to the terminal's width (pandera's tests import black in
    their bodies: `No module named 'bl...`), so the fix they name (install black) was never found."""
    errors: list[str] = []
    for found in _MISSING_MODULE.finditer(log):
        if found.group(1) not in errors and len(errors) < limit:
            errors.append(found.group(1))
    for marker in ("ImportError while importing test module", "ERROR collecting"):
        start = log.find(marker)
        while start >= 0 and len(errors) < limit:
            found = _IMPORT_ERROR.search(log[start:start + 20000])
            if found and found.group(1).strip() not in errors:
                errors.append(found.group(1).strip())
            start = log.find(marker, start + len(marker))
    return "\n".join(errors)


def _broken(count: int, log: str, tail: str) -> str:
    if not count:
        return ""
    error = first_import_error(log)
    return f"{count} test modules failed to import{tail}" + (f"; the first: {error}" if error else "")


def refusal(run: Run, threshold: float, min_tests: int = MIN_TESTS) -> str | None:
    """Why the run does not accept its environment, or None when it does."""
    if run.stage != "test":
        return "the build failed"
    ran, skipped, broken = len(run.counted), len(run.skipped), len(run.import_failed)
    if run.passed == 0:
        return "no test passed" + (f" ({_broken(broken, run.log, '')})" if broken else "")
    # The floor: a suite (or sample) that defines fewer tests is held to what it defines.
    floor = min(min_tests, run.defined_tests) if run.defined_tests is not None else min_tests
    if ran < floor:
        return f"only {ran} tests ran (at least {floor} needed)"
    if skipped > MAX_SKIPPED_SHARE * (ran + skipped):
        return f"{skipped} of {ran + skipped} collected tests skipped (over {MAX_SKIPPED_SHARE:.0%})"
    if COVERAGE_FAILURE.search(run.log):
        return "pytest-cov's fail-under fails the run though its tests pass (every graded run would fail)"
    if run.ratio() < threshold:
        return (f"{_share_below(run.ratio(), threshold)} of the judged tests passed (needs {threshold:.0%})"
                + (f"; {_broken(broken, run.log, ', each counted as its tests failing')}" if broken else ""))
    return None


def _share_below(ratio: float, threshold: float) -> str:
    """A share under the threshold, never printed as the threshold itself (openapi-core: "95% of the
    judged tests passed (needs 95%)" for 94.96%)."""
    whole = f"{ratio:.0%}"
    return whole if whole != f"{threshold:.0%}" else f"{ratio:.2%}"
