"""`audit --test-strength`: how many wrong versions of the gold fix a task's own tests reject.

For each task: the gold patch is applied at the base commit, the lines it changed are mutated one
mutant at a time, and each mutant (as a patch: gold plus the mutation) runs through the eval's own
path (harness.instance.run_tests: workspace, environment, test patch, sandbox, parser), graded on
FAIL_TO_PASS and PASS_TO_PASS. A mutant is killed when the grade is not resolved, or when the
tests time out or crash. Test strength = killed / mutants run. A surviving mutant is a wrong patch
the task would accept (some survivors are equivalent to the gold fix; the example is shown so a
person can tell).
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from functools import partial

from issuebench.errors import IssuebenchError
from issuebench.executors import Failure, LocalExecutor, drive
from issuebench.grading import grade
from issuebench.harness import (
    EvalContext,
    create_workspace,
    git,
    remove_workspace,
    resolve_task_spec,
    run_tests,
)
from issuebench.models import InstanceStatus, PatchStatus, Task
from issuebench.patch import apply_patch
from issuebench.repos import find_repo
from issuebench.strength.mutants import Mutant, Mutator
from issuebench.strength.select import changed_code
from issuebench.strength.synth_adapter import default_mutator

# Statuses of a mutant's run that mean the tests noticed (a hang or a crash is not a pass).
_KILLING = {InstanceStatus.TIMEOUT, InstanceStatus.MEMORY_LIMIT, InstanceStatus.PROCESS_LIMIT,
            InstanceStatus.OUTPUT_LIMIT, InstanceStatus.FILE_LIMIT, InstanceStatus.LOG_UNPARSEABLE}


@dataclass
class MutantResult:
    path: str
    line: int
    description: str
    killed: bool
    how: str            # the failing tests, or the status that killed it
    patch: str = ""     # gold + mutation, kept for survivors only
    shown: list[str] = field(default_factory=list)  # the line in the gold-fixed tree, and as mutated


@dataclass
class TaskStrength:
    instance_id: str
    repo: str
    status: str         # "measured" | "gold_unresolved" | "no_mutants" | "error"
    reason: str = ""
    mutants: list[MutantResult] = field(default_factory=list)
    candidates: int = 0  # mutants the generator offered before sampling

    @property
    def killed(self) -> int:
        return sum(1 for m in self.mutants if m.killed)

    @property
    def strength(self) -> float | None:
        return self.killed / len(self.mutants) if self.mutants else None

    @property
    def survivors(self) -> list[MutantResult]:
        return [m for m in self.mutants if not m.killed]

    def as_dict(self) -> dict:
        d = asdict(self)
        d["strength"] = self.strength
        d["killed"] = self.killed
        return d


def sample(mutants: list[Mutant], limit: int) -> list[Mutant]:
    """At most `limit` mutants spread over the changed lines (every k-th in file and line order)."""
    mutants = sorted(mutants, key=lambda m: (m.path, m.line, m.description))
    if len(mutants) <= limit:
        return mutants
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


def mutant_patches(task: Task, source, mutator: Mutator,
                   limit: int) -> tuple[list[tuple[Mutant, str, list[str]]], int]:
    """Each sampled mutant as a patch against the base commit (the gold fix with one change)."""

    ws = create_workspace(source, task.base_commit)
    try:
        applied = apply_patch(ws, task.patch)
        if applied.status not in (PatchStatus.APPLIED, PatchStatus.APPLIED_AFTER_REPAIR):
            raise IssuebenchError(f"the gold patch does not apply: {applied.status.value}")
        found: list[Mutant] = []
        for path, lines in changed_code(task.patch).lines.items():
            target = ws / path
            if target.is_file():
                found.extend(mutator.mutants(path, target.read_text(encoding="utf-8", errors="replace"), lines))
        chosen = sample(found, limit)
        out = []
        for m in chosen:
            target = ws / m.path
            original = target.read_bytes()
            diff = difflib.unified_diff(original.decode(errors="replace").splitlines(), m.text.splitlines(),
                                        lineterm="", n=0)
            shown = [f"{d[0]} {d[1:].strip()}" for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---"))][:4]
            target.write_text(m.text, encoding="utf-8")
            git(ws, "add", "-A")
            out.append((m, git(ws, "diff", "--cached", task.base_commit).stdout, shown))
            target.write_bytes(original)
        return out, len(found)
    finally:
        remove_workspace(ws)


def measure_task(task: Task, ctx: EvalContext, *, mutator: Mutator | None = None, limit: int = 10) -> TaskStrength:
    """Test strength of one task. Never raises for a fault of the task."""
    result = TaskStrength(task.instance_id, task.repo, "error")
    try:
        source = find_repo(task.repo, ctx.repos_dir, allow_clone=ctx.allow_clone)
        spec = resolve_task_spec(task, ctx.recipes_dir, source)
    except IssuebenchError as exc:
        result.reason = exc.message
        return result
    gold = run_tests(task, task.patch, ctx, spec=spec)
    if gold.status is not InstanceStatus.UNRESOLVED or not _resolves(task, gold.status_map):
        result.status = "gold_unresolved"
        result.reason = f"the gold patch does not resolve the task here ({gold.status.value}): {gold.reason}"[:400]
        return result
    try:
        patches, result.candidates = mutant_patches(task, source, mutator or default_mutator(), limit)
    except IssuebenchError as exc:
        result.reason = exc.message
        return result
    if not patches:
        result.status, result.reason = "no_mutants", "the generators offer no mutant of the changed lines"
        return result
    for mutant, patch, shown in patches:
        run = run_tests(task, patch, ctx, spec=spec)
        if run.status is InstanceStatus.UNRESOLVED:
            g = grade(run.status_map, task.FAIL_TO_PASS, task.PASS_TO_PASS, eval_type=task.eval_type)
            fails = [*g.tests_status.FAIL_TO_PASS.failure, *g.tests_status.PASS_TO_PASS.failure]
            killed, how = not g.resolved, ", ".join(fails[:5])
        else:
            killed, how = run.status in _KILLING, f"{run.status.value}: {run.reason}"[:200]
            if run.status in (InstanceStatus.APPLY_FAILED, InstanceStatus.INVALID_PATCH, InstanceStatus.ERROR,
                              InstanceStatus.ENV_FAILED, InstanceStatus.SANDBOX_FAILED):
                continue  # not a verdict on the tests
        result.mutants.append(MutantResult(mutant.path, mutant.line, mutant.description, killed, how,
                                           "" if killed else patch, shown))
    result.status = "measured" if result.mutants else "no_mutants"
    return result


def _resolves(task: Task, status_map) -> bool:
    return grade(status_map, task.FAIL_TO_PASS, task.PASS_TO_PASS, eval_type=task.eval_type).resolved


def measure_tasks(tasks: list[Task], ctx: EvalContext, *, limit: int = 10, workers: int = 1,
                  mutator: Mutator | None = None, on_result=None) -> list[TaskStrength]:
    """Every task through the one fan-out path (executors.drive), in the tasks' order; a task
    whose measurement raised is an `error` row, and the audit goes on."""
    results: list[TaskStrength | None] = [None] * len(tasks)

    def handle(index: int, res: TaskStrength | Failure) -> None:
        if isinstance(res, Failure):
            res = TaskStrength(tasks[index].instance_id, tasks[index].repo, "error", res.reason)
        results[index] = res
        if on_result:
            on_result(res)

    drive(LocalExecutor(max(1, workers)), partial(measure_task, ctx=ctx, mutator=mutator, limit=limit), tasks, handle)
    return [r for r in results if r is not None]
