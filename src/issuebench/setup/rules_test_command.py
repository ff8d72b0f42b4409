"""Setup rules that change how the suite is run: the runner, pytest's verbosity and style, its
assertion rewriting, colour and coverage (registered by name like the others, `rules.py`)."""

from __future__ import annotations

from issuebench.setup.diagnose import Diagnosis
from issuebench.setup.plan import PYTEST_CMD, UNITTEST_CMD, Plan, marker_selection
from issuebench.setup.rule_base import Fix, RuleContext, replace_packages, rule, with_packages


@rule
def switch_runner(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """No tests ran: first run from the root without paths, then switch pytest <-> unittest."""
    if plan.test_args:
        return Fix(plan.copy(test_args=[]), "no tests ran: run from the repository root")
    if plan.runner == "pytest":
        return Fix(plan.copy(runner="unittest", test_cmd=UNITTEST_CMD, log_parser="unittest"),
                   "no tests ran under pytest: use unittest")
    new = plan.copy(runner="pytest", test_cmd=PYTEST_CMD, log_parser="pytest")
    fix = with_packages(new, ["pytest"], "no tests ran under unittest: use pytest")
    return fix or Fix(new, "no tests ran under unittest: use pytest")


@rule
def whole_suite(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """Every test skipped under a marker selection (`-m gpu`): run the whole suite instead."""
    args = list(plan.test_args)
    span = marker_selection(args)
    if span is None:
        return None
    del args[span]
    return Fix(plan.copy(test_args=args), "every test skipped under the marker selection: run the whole suite")


CLASSIC_STYLE = "--override-ini=console_output_style=classic"


@rule
def verbose_pytest(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """An old pytest prints no `PASSED id` summary lines: run verbose, read `id PASSED` lines."""
    if " -v" in f" {plan.spec.test_cmd} ":
        return None
    # The classic console style ends each verbose line with its status (no progress percentage),
    # the form parser pytest_v2 reads.
    # `--override-ini=` with its value joined: pytest 3.0-3.2 take `-o` with any number of values
    # and would swallow the test paths after it.
    command = f"{plan.spec.test_cmd} -v {CLASSIC_STYLE}"
    return Fix(plan.copy(test_cmd=command, log_parser="pytest_v2"),
               "no per-test results in the log: run pytest -v (classic style), parser pytest_v2")


@rule
def classic_style_off(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """A pytest older than 3.0 has no --override-ini; its verbose lines are classic anyway."""
    if CLASSIC_STYLE not in plan.spec.test_cmd:
        return None
    command = " ".join(plan.spec.test_cmd.replace(CLASSIC_STYLE, "").split())
    return Fix(plan.copy(test_cmd=command), "pytest older than 3.0: verbose without --override-ini")


@rule
def plain_asserts(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """An old pytest's assertion rewriting fails on a newer Python's syntax tree: turn it off
    (`--assert=plain`, known since pytest 2.1; failures then show less detail, results are the same)."""
    if "--assert=" in plan.spec.test_cmd:
        return None
    return Fix(plan.copy(test_cmd=f"{plan.spec.test_cmd} --assert=plain"),
               "old pytest cannot rewrite this Python's asserts: --assert=plain")


@rule
def colour_off(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """The configuration forces colour codes, which hide each result line from the parser."""
    return Fix(plan.copy(test_cmd=f"{plan.spec.test_cmd} --color=no"),
               "colour codes hide the results: run pytest --color=no")


@rule
def xdist_off(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """pytest-xdist's workers (from addopts) disagree on what they collected: run in one process
    (`-n 0`, the last -n wins), as every graded run then does too."""
    if " -n 0" in f" {plan.spec.test_cmd} ":
        return None
    return Fix(plan.copy(test_cmd=f"{plan.spec.test_cmd} -n 0"),
               "xdist's workers collected different tests: run pytest -n 0")


@rule
def needs_network(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """Tests that need the internet fail in the sandbox whatever the environment: no fix."""
    return None


@rule
def coverage_off(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """pytest-cov's fail-under (from addopts) fails a run of a few files whose tests all pass: the
    exit status would make every graded run of a task unresolved. --no-cov turns coverage off."""
    if "--no-cov" in plan.spec.test_cmd:
        return None
    return Fix(plan.copy(test_cmd=f"{plan.spec.test_cmd} --no-cov"),
               "coverage under its fail-under fails the run: run pytest --no-cov")


# The cap a suite stopped at its sandbox's limit gets instead: well above a JVM's threads (a Spark
# session held 300 or so), still a cap on a fork bomb, beside the run's memory limit.
MORE_PROCESSES = 4096


@rule
def more_processes(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """The suite needs more processes and threads at once than the sandbox's default: the recipe's
    max_procs, which every graded run of its tasks then has too."""
    if (plan.spec.max_procs or 0) >= MORE_PROCESSES:
        return None
    return Fix(plan.copy(max_procs=MORE_PROCESSES),
               f"the run needed more processes and threads at once than the sandbox allows: max_procs {MORE_PROCESSES}")


@rule
def required_plugins(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """The configuration's `required_plugins` (`pytest-asyncio>=0.23, pytest-cov`): install those the
    environment lacks; when each is there, pin the versions it asks."""
    specs = [part.strip() for line in diagnosis.found.get("plugins", [])[:1] for part in line.split(",")]
    specs = [spec for spec in specs if spec]
    return with_packages(plan, specs, "required pytest plugins") or \
        replace_packages(plan, [spec for spec in specs if any(op in spec for op in "<>=!~")],
                         "required pytest plugin versions")


@rule
def qt_offscreen(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """Qt found no display (the sandbox has none) and aborted: its offscreen platform needs none,
    as a project's CI sets it (or runs a virtual display)."""
    if plan.spec.env_vars.get("QT_QPA_PLATFORM") == "offscreen":
        return None
    return Fix(plan.copy(env_vars={**plan.spec.env_vars, "QT_QPA_PLATFORM": "offscreen"}),
               "Qt found no display: QT_QPA_PLATFORM=offscreen")
