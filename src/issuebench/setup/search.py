"""ITERATE: one attempt after another, until one is accepted or the budget is spent.

Each attempt, in this order: the budget (builds, attempts per build, the time limit) -> the plan's
environment judged on the suite -> the attempt recorded (and the best run so far) -> a refusal
diagnosed -> the next fix: the commit's own recipe after a remembered one fails, a rule, the
model, an older Python, the next candidate recipe. Every attempt keeps its error excerpt and the
fix it led to.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from issuebench.errors import IssuebenchError
from issuebench.setup.diagnose import Diagnosis, diagnose, excerpt
from issuebench.setup.extract import Facts
from issuebench.setup.judging import import_errors, judge_attempt, quiet_pytest, refusal
from issuebench.setup.model import ModelClient
from issuebench.setup.plan import Plan
from issuebench.setup.requirements import requirement_name
from issuebench.setup.rules import Fix, RuleContext, apply_rule
from issuebench.setup.runner import Run, Runner, own_install_failed
from issuebench.setup.source import SourceTree
from issuebench.setup.tools import with_dated_tools

# Attempts that change only how the tests run reuse the last build; at most this many per build.
ATTEMPTS_PER_BUILD = 3
_FRESH = ("remembered recipe failed: use the extracted one", "next candidate recipe")


@dataclass
class Attempt:
    iteration: int
    origin: str                      # "extracted" | "memory" | "rule: ..." | "model: ..."
    python: str
    stage: str                       # where it stopped: "build" | "test" | "accepted"
    tests_run: int = 0
    tests_passed: int = 0
    tests_skipped: int = 0
    modules_unimportable: int = 0    # test modules that failed to import (each counts as its tests failing)
    files_cut: list[str] = field(default_factory=list)   # test files that ran out of their time budget
    refusal: str = ""                # why the attempt did not accept its environment
    error_kind: str | None = None
    error: str = ""                  # excerpt of the log that explains the failure
    fix: str | None = None           # the fix this failure led to (applied in the next attempt)
    seconds: float = 0.0
    judged_on: str = ""              # "20 of 900 test files" when a large suite was sampled
    spec: dict[str, Any] = field(default_factory=dict)


@dataclass
class Limits:
    max_iterations: int              # builds at most
    threshold: float                 # share of the judged tests that must pass
    min_tests: int
    time_limit: float | None         # seconds from the start after which no attempt starts
    deadline: float | None           # the same, on time.monotonic()'s clock


@dataclass
class Search:
    """One setup's attempts: what they share, and what they found."""

    runner: Runner
    tree: SourceTree
    facts: Facts
    queue: list[Plan]                # candidate recipes not yet tried, in order
    client: ModelClient | None
    limits: Limits
    ctx: RuleContext = field(init=False)
    attempts: list[Attempt] = field(default_factory=list)
    best: tuple[Run, Plan, str] | None = None   # the accepted run, or the one that passed most
    timed_out: bool = False
    builds: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.ctx = RuleContext(tree=self.tree, facts=self.facts)

    def run(self) -> None:
        plan = self.queue.pop(0)
        for iteration in itertools.count(1):
            started = time.monotonic()
            plan = with_dated_tools(plan)
            if not self._may_start(plan, iteration):
                return
            attempt, run, refused = self._attempt(iteration, plan)
            if refused is None:
                attempt.stage = "accepted"
            fix = None if refused is None else self._next_fix(run, plan, attempt, refused)
            attempt.seconds = round(time.monotonic() - started, 2)
            if fix is None:
                return
            plan = self._follow(fix, attempt)

    def _may_start(self, plan: Plan, iteration: int) -> bool:
        """Within the budget: max_iterations bounds builds, and an attempt that changes only how
        the tests run (the command, the parser, variables) reuses the last build and costs seconds."""
        limits = self.limits
        self.builds.add(plan.built_spec().env_hash())
        if len(self.builds) > max(1, limits.max_iterations) or \
                iteration > ATTEMPTS_PER_BUILD * max(1, limits.max_iterations):
            return False
        if limits.deadline is not None and time.monotonic() >= limits.deadline:
            self.runner.say(f"time limit of {limits.time_limit:g}s reached: no further attempt")
            self.timed_out = True
            return False
        return True

    def _attempt(self, iteration: int, plan: Plan) -> tuple[Attempt, Run, str | None]:
        """Build and judge the plan's environment; record the attempt. Returns the refusal, None
        when the environment is accepted."""
        self.ctx.pythons_tried.add(plan.spec.python)
        self.runner.say(f"attempt {iteration} [{plan.origin}]")
        # A remembered recipe was confirmed on a larger sample where it was accepted: here its
        # first sample decides (copier: 100 s less a version group, at half a second a test).
        run, judged_on = judge_attempt(self.runner, plan, self.facts, self.tree, self.limits.threshold,
                                       confirm_on_more=not plan.origin.startswith("memory"))
        refused = refusal(run, self.limits.threshold, self.limits.min_tests)
        attempt = Attempt(iteration=iteration, origin=plan.origin, python=plan.spec.python, stage=run.stage,
                          tests_run=len(run.counted), tests_passed=run.passed, tests_skipped=len(run.skipped),
                          modules_unimportable=len(run.import_failed), files_cut=run.cut_files,
                          refusal=refused or "", judged_on=judged_on,
                          spec=plan.built_spec().model_dump(mode="json", exclude_defaults=True))
        self.attempts.append(attempt)
        # The result is the accepted attempt's; short of one, the attempt that passed most. An
        # earlier attempt may have passed more tests and still been rejected (a lower share).
        if refused is None or (run.stage == "test" and (self.best is None or run.passed > self.best[0].passed)):
            self.best = (run, plan, judged_on)
        self.runner.say(f"attempt {iteration}: {'accepted' if refused is None else run.stage + ': ' + refused} "
                        f"({run.passed}/{len(run.counted)} passed, {len(run.skipped)} skipped, "
                        f"{len(run.import_failed)} modules unimportable"
                        f"{', ' + str(len(run.cut_files)) + ' files cut for time or memory' if run.cut_files else ''}"
                        f"{', ' + judged_on if judged_on else ''})")
        return attempt, run, refused

    def _next_fix(self, run: Run, plan: Plan, attempt: Attempt, refused: str) -> Fix | None:
        """Why the attempt was refused, and what to try next (None: nothing left to try)."""
        diagnosis = diagnose_run(run, plan)
        attempt.error_kind = diagnosis.kind if diagnosis else ("tests_failed" if run.statuses else None)
        attempt.error = diagnosis.excerpt if diagnosis else excerpt(run.log)
        if diagnosis is not None and diagnosis.kind == "needs_network" and run.statuses and \
                "judged tests passed" in refused:
            return None           # the suite needs the internet: no environment passes it offline
        if diagnosis is not None and diagnosis.kind == "needs_network" and run.stage == "build" and \
                own_install_failed(run.log):
            # The project's own build reaches for the internet (keyring's coherent.licensed fetches
            # its licence text): no other Python or package changes that; trying each cost minutes.
            return None
        fix = None
        if plan.origin.startswith("memory") and self.queue:
            # A remembered recipe that fails here is dropped for this commit's own files.
            fix = Fix(self.queue.pop(0), _FRESH[0])
        if fix is None and diagnosis:
            fix = apply_rule(diagnosis, plan, self.ctx)
        if fix is None and run.stage == "test" and run.failing:
            # Tests ran and failed on what the date allowed: the versions the project locked.
            fix = apply_rule(Diagnosis(kind="tests_failed", fix="pin_locked_versions", line=""), plan, self.ctx)
        if fix is None and self.client is not None:
            fix = _ask_model(self.client, plan, self.facts, attempt.error, self.ctx)
        if fix is None:
            # No signature, or its rule is spent: an older Python is the most common cure for
            # both a build that fails and a suite that mostly fails.
            fix = apply_rule(Diagnosis(kind="unknown", fix="other_python", line=attempt.error_kind or "unknown"),
                             plan, self.ctx)
        if fix is None and self.queue:
            fix = Fix(self.queue.pop(0), _FRESH[1])
        return fix

    def _follow(self, fix: Fix, attempt: Attempt) -> Plan:
        attempt.fix = fix.description
        self.ctx.tried.add(fix.description)
        plan = fix.plan
        if fix.description not in _FRESH:          # a fresh candidate keeps its own origin
            plan.origin = ("model: " if fix.description.startswith("model") else "rule: ") + fix.description
        return plan


def diagnose_run(run: Run, plan: Plan) -> Diagnosis | None:
    """What the run's log says went wrong. A missing module, named in a failing test's own report
    or in a module's import error, names its own fix first: the log's tail, where other signatures
    are sought, may have lost its words."""
    return quiet_pytest(run, plan) or (diagnose(import_errors(run.log)) if run.failing else None) \
        or diagnose(run.log)


def _ask_model(client: ModelClient, plan: Plan, facts: Facts, error: str, ctx: RuleContext) -> Fix | None:
    try:
        proposal = client.propose_fix(error_excerpt=error, files=facts.sources,
                                      spec_json=plan.spec.model_dump_json(exclude_defaults=True),
                                      history=sorted(ctx.tried))
    except IssuebenchError as exc:
        ctx.tried.add(f"model unavailable: {exc.message}")
        return None
    if proposal is None:
        return None
    removed = {requirement_name(p) for p in proposal.packages_remove}
    packages = [p for p in plan.spec.packages if requirement_name(p) not in removed]
    have = {requirement_name(p) for p in packages}
    packages += [p for p in proposal.packages_add if requirement_name(p) not in have]
    changes: dict[str, Any] = {"packages": packages}
    if proposal.python:
        changes["python"] = proposal.python
    if proposal.install is not None:
        changes["install"] = proposal.install
    if proposal.test_cmd:
        changes["test_cmd"] = proposal.test_cmd
        changes["test_args"] = []
    if proposal.env_vars:
        changes["env_vars"] = {**plan.spec.env_vars, **proposal.env_vars}
    parts = [f"+{', +'.join(proposal.packages_add)}" if proposal.packages_add else "",
             f"-{', -'.join(proposal.packages_remove)}" if proposal.packages_remove else "",
             f"python {proposal.python}" if proposal.python else "",
             f"install {proposal.install}" if proposal.install is not None else "",
             f"test_cmd {proposal.test_cmd!r}" if proposal.test_cmd else "",
             f"env {proposal.env_vars}" if proposal.env_vars else ""]
    return Fix(plan.copy(**changes), "model: " + "; ".join(p for p in parts if p))
