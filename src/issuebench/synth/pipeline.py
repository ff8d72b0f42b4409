"""`synthesize`: a repository at a commit in, graded tasks out (see docs/synth.md).

recipe (given, or from `setup`) -> workbench -> coverage map and baseline (once per commit) ->
candidates from every generator -> validation on covering tests, `workers` at a time -> the
tasks repository, tasks.jsonl, candidates.jsonl and yield.json. A rerun with the same output
folder skips what candidates.jsonl already decided.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from issuebench.errors import InputError
from issuebench.executors import Failure, Gate, LocalExecutor, drive
from issuebench.synth import coverage_map, output
from issuebench.synth.base import Candidate, SynthContext
from issuebench.synth.generators import get_generators
from issuebench.synth.remote import check_record, failed_row, synth_job
from issuebench.synth.run import Progress, Run, SynthOptions, git_value, recipe_commit
from issuebench.synth.source import functions
from issuebench.synth.tasks import python_files
from issuebench.synth.validate import DUPLICATE, EQUIVALENT, KEPT, SYNTAX, Baseline, Outcome

__all__ = ["Prepared", "SynthOptions", "SynthResult", "prepare", "synthesize"]


@dataclass
class SynthResult:
    output: Path
    yield_table: dict[str, dict[str, int]]
    kept: int
    seconds: float
    summary: dict[str, Any]


def order(cands: list[Candidate], seed: int) -> list[Candidate]:
    """Spread the run over generators and functions: a --limit sample then covers them all."""
    rng = random.Random(seed)
    groups: dict[str, list[Candidate]] = {}
    for cand in cands:
        groups.setdefault(cand.generator, []).append(cand)
    queues = []
    for name in sorted(groups):
        items = groups[name]
        rng.shuffle(items)
        seen: dict[tuple, int] = {}
        ranked = []
        for cand in items:
            key = tuple(cand.functions)
            ranked.append((seen.get(key, 0), cand))
            seen[key] = seen.get(key, 0) + 1
        queues.append([c for _, c in sorted(ranked, key=lambda rc: rc[0])])
    out: list[Candidate] = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


@dataclass
class Prepared:
    """A run ready to validate candidates: the baseline is known and generators can start."""

    run: Run
    cmap: coverage_map.CoverageMap
    base: Baseline
    base_seconds: dict[str, float]
    ctx: SynthContext
    timeout: float
    generators: list


def prepare(src: str | Path, opts: SynthOptions, progress: Progress = lambda _line: None) -> Prepared:
    """Resolve the commit and recipe, build the workbench, map tests to lines (or reuse the map)."""

    source = Path(src).resolve()
    if not source.exists():
        raise InputError(source, "no such repository", hint="pass a git clone or `repo from-pypi` output")
    wanted = opts.commit or (recipe_commit(opts.recipe) if opts.recipe else None) or "HEAD"
    commit = git_value(source, "rev-parse", f"{wanted}^{{commit}}")
    try:
        generators = get_generators(opts.generators)
    except KeyError as exc:
        raise InputError(Path("--generators"), f"unknown generator(s): {exc.args[0]}",
                         hint="see `issuebench synth --help` for the names") from exc
    run = Run(source, commit, opts, progress)
    try:
        cmap, base, base_seconds = run.baseline()
        progress(f"baseline: {len(base.passed)} passing tests, suite {base.suite_seconds:.1f}s")
        bench = run.bench()
        files = python_files(bench.ws, cmap)
        ctx = SynthContext(root=bench.ws, commit=commit, files=files, covered=covered(files, cmap, base.passed),
                           git_dir=source, client=opts.client, seed=opts.seed, options=opts.options)
    except BaseException:
        run.close()
        raise
    timeout = opts.timeout or max(60.0, 5 * base.suite_seconds)
    return Prepared(run, cmap, base, base_seconds, ctx, timeout, generators)


def synthesize(src: str | Path, opts: SynthOptions, progress: Progress = lambda _line: None) -> SynthResult:
    started = time.monotonic()
    p = prepare(src, opts, progress)
    run = p.run
    try:
        budget = [opts.limit if opts.limit is not None else 10**9]
        singles = [g for g in p.generators if g.phase == "single"]
        combined = [g for g in p.generators if g.phase != "single"]
        reserve = opts.limit - max(1, int(opts.limit * 0.9)) if combined and opts.limit is not None else 0
        budget[0] -= reserve  # a share of --limit is kept for combinations of what singles kept
        run_phase(run, plan(run, singles, p.ctx, budget), p)
        if combined:
            budget[0] += reserve
            p.ctx.kept = kept_candidates(run, singles, p.ctx)
            run_phase(run, plan(run, combined, p.ctx, budget), p)
    finally:
        run.close()
    return finish(run, opts, p.base_seconds, started)


def covered(files: dict[str, str], cmap: coverage_map.CoverageMap, tests: set[str]) -> set[tuple[str, str]]:

    found = set()
    for path, source in files.items():
        try:
            fns = functions(path, source)
        except SyntaxError:
            continue
        for fn in fns:
            if cmap.tests_for(path, *fn.body_lines, tests) != set():
                found.add((path, fn.qualname))
    return found


def kept_candidates(run: Run, singles: list, ctx: SynthContext) -> list[Candidate]:
    kept_ids = {i for i, row in run.log.done.items() if row["status"] == KEPT}
    return [c for g in singles for c in g.candidates(ctx) if c.id in kept_ids]


def plan(run: Run, generators: list, ctx: SynthContext, budget: list[int]) -> list[Candidate]:
    """The candidates to validate, in order; syntax errors, no-ops and repeats are logged, not run."""
    seen: set[str] = set(run.log.done)
    todo: list[Candidate] = []
    considered = 0
    for cand in order([c for g in generators for c in g.candidates(ctx)], run.opts.seed):
        if run.opts.only is not None and not named(cand, run.opts.only):
            continue
        if considered >= budget[0]:
            break
        considered += 1
        if cand.id in run.log.done:
            continue
        problem = cand.problem()
        status = DUPLICATE if cand.id in seen else {"syntax": SYNTAX, "equivalent": EQUIVALENT}.get(problem or "")
        seen.add(cand.id)
        if status:
            log_id = cand.id + (f"-dup{considered}" if status == DUPLICATE else "")
            run.log.add({"id": log_id, "generator": cand.generator, "status": status, "seconds": 0.0,
                         "runs": 0, "tests": 0})
            continue
        todo.append(cand)
    budget[0] -= considered
    return todo


def named(cand: Candidate, ids: frozenset[str]) -> bool:
    """Whether --instance-ids names the candidate: by its id, or by the instance id it was kept as
    (owner__name.commit.generator__id8, Run.keep)."""
    tail = f".{cand.generator}__{cand.id[:8]}"
    return cand.id in ids or any(i.endswith(tail) for i in ids)


def run_phase(run: Run, todo: list[Candidate], p: Prepared) -> None:
    """Validate candidates through the one fan-out path (executors.drive), `workers` at a time
    here or on the run's executor (synth.remote); the driver records each outcome as it arrives.
    No candidate is drawn once --max-tasks are kept; those in flight still finish and are recorded.

    A candidate whose check raised or lost its worker is logged as `error` with `retry`: no
    verdict on the candidate, so a rerun of the same output folder validates it again."""
    executor = run.opts.executor or LocalExecutor(max(1, run.opts.workers))
    if executor.name == "local":  # threads of this process: each validates in a workbench of its own
        work: Callable[[Candidate], tuple[Outcome, str]] = partial(run.check_here, p.cmap, p.base, p.timeout)
    else:  # candidates go to workers with what they need, shipped once
        work = partial(check_record, job=synth_job(run, p))
    gate = Gate(todo, run.full)  # full: this phase or an earlier one kept them all

    def handle(index: int, outcome: tuple[Outcome, str] | Failure) -> None:
        cand = todo[index]
        if isinstance(outcome, Failure):
            row = failed_row(cand, f"{executor.name} executor: {outcome.kind}: {outcome.reason}")
            run.log.add(row)
        else:
            try:
                row = run.record(cand, *outcome)  # logs it; a kept one is committed and written
            except Exception as exc:  # the driver's own step: one candidate it cannot write never stops the run
                row = failed_row(cand, f"{type(exc).__name__}: {exc}", retry=False)
                run.log.add(row)
        run.progress(f"{cand.generator} {cand.id}: {row['status']} ({row['seconds']:.1f}s)")

    drive(executor, work, gate, handle)


def finish(run: Run, opts: SynthOptions, base_seconds: dict[str, float], started: float) -> SynthResult:
    rows = list(run.log.done.values())
    table = output.yield_table(rows)
    seconds = time.monotonic() - started
    kept = table.get("total", {}).get(KEPT, 0)
    summary = {
        "repo": run.name, "commit": run.commit, "scope": opts.scope, "workers": opts.workers,
        "generators": table, "baseline": base_seconds,
        "seconds": round(seconds, 1),
        "validation_seconds": round(sum(r.get("seconds", 0.0) for r in rows), 1),
        "kept": kept, "kept_per_hour": round(kept / seconds * 3600, 1) if seconds else None,
        "note": "seconds and rates are of this run only (a resumed run counts its own time)",
    }
    (run.out / "yield.json").write_text(json.dumps(summary, indent=2) + "\n")
    return SynthResult(run.out, table, kept, seconds, summary)
