"""One synth run's shared state: the recipe, a workbench per worker, the logs, the tasks repository."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench.collect import load_recipe as load_spec
from issuebench.envs import EnvBuilder
from issuebench.errors import InputError
from issuebench.models import EnvSpec
from issuebench.sandbox import get_sandbox
from issuebench.setup import setup_repository, write_recipe
from issuebench.synth import coverage_map, output
from issuebench.synth.base import Candidate
from issuebench.synth.tasks import make_row
from issuebench.synth.validate import KEPT, Baseline, Outcome, check
from issuebench.synth.workbench import Workbench
from issuebench.tomlcompat import tomllib

Progress = Callable[[str], None]


@dataclass
class SynthOptions:
    output: Path
    commit: str | None = None
    date: str | None = None
    recipe: Path | None = None
    generators: list[str] | None = None
    limit: int | None = None            # candidates considered at most (after ordering)
    max_tasks: int | None = None        # stop once this many are kept
    workers: int = 1
    scope: str = "covering"             # or "suite": run the whole suite per candidate
    timeout: float | None = None        # per candidate run; default 3x the suite, at least 30 s
    seed: int = 0
    name: str | None = None             # owner/name of the rows
    no_sandbox: bool = False
    client: Any | None = None           # query(messages): model rewrite and issue wording
    executor: Any | None = None         # issuebench.executors: None/local validates in threads here
    only: frozenset[str] | None = None  # --instance-ids: candidate ids, or the instance ids of kept tasks
    options: dict[str, Any] = field(default_factory=dict)


def git_value(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(repo), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise InputError(repo, f"git {args[0]} failed: {proc.stderr.strip()[-200:]}",
                         hint="pass a git repository (a clone, or `issuebench repo from-pypi NAME`)")
    return proc.stdout.strip()


def repo_name(source: Path) -> str:
    proc = subprocess.run(["git", "-C", str(source), "remote", "get-url", "origin"], capture_output=True, text=True)
    url = proc.stdout.strip().removesuffix(".git")
    parts = [p for p in url.replace(":", "/").split("/") if p]
    if proc.returncode == 0 and len(parts) >= 2:
        return f"{parts[-2]}/{parts[-1]}"
    return f"synth/{source.name}"


def load_recipe(path: Path) -> tuple[EnvSpec, list[str]]:
    """An EnvSpec and the suite's arguments from a recipe file (`setup -o` writes test_args too)."""

    spec = load_spec(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        data = {}
    return spec, [str(a) for a in data.get("test_args", [])]


def recipe_commit(path: Path) -> str | None:
    """The commit a `setup -o` recipe was accepted at: the default commit to break."""
    try:
        value = tomllib.loads(path.read_text()).get("commit")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return str(value) if value else None


def with_package(spec: EnvSpec, name: str) -> EnvSpec:
    from packaging.requirements import InvalidRequirement, Requirement

    have = set()
    for req in spec.packages:
        try:
            have.add(Requirement(req).name.lower())
        except InvalidRequirement:
            continue
    return spec if name in have else spec.model_copy(update={"packages": [*spec.packages, name]})


def pytest_spec(spec: EnvSpec, progress: Progress) -> EnvSpec:
    """The recipe with pytest as the runner: test ids and coverage contexts come from pytest.

    pytest also runs unittest and doctest-free suites, so a `python -m unittest` recipe becomes
    `python -m pytest -rA` with pytest installed; the rows carry this recipe, so eval agrees.
    """
    if "pytest" in spec.test_cmd:
        return spec
    progress(f"the recipe runs `{spec.test_cmd}`; synth runs the same tests with pytest")
    return with_package(spec, "pytest").model_copy(update={
        "test_cmd": "python -m pytest -rA", "log_parser": "pytest", "test_directives": "paths"})


def find_recipe(source: Path, commit: str, opts: SynthOptions, progress: Progress) -> tuple[EnvSpec, list[str]]:
    if opts.recipe is not None:
        return load_recipe(opts.recipe)

    progress("no --recipe: running setup")
    result = setup_repository(str(source), commit=commit, date=opts.date, progress=progress)
    if not result.success or result.spec is None:
        raise InputError(source, f"setup found no working recipe: {result.reason}",
                         hint="run `issuebench setup` and pass its output with --recipe")
    write_recipe(opts.output / "recipe.toml", result.recipe())
    return result.spec, list(result.test_args)


class Run:
    """One synth run's shared state: benches per worker, logs, the tasks repository."""

    def __init__(self, source: Path, commit: str, opts: SynthOptions, progress: Progress) -> None:
        self.source, self.commit, self.opts, self.progress = source, commit, opts, progress
        self.out = opts.output.resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        self.date = git_value(source, "show", "-s", "--format=%cI", commit)
        self.name = opts.name or repo_name(source)
        spec, self.test_args = find_recipe(source, commit, opts, progress)
        self.spec = pytest_spec(spec, progress)
        self.work_spec = with_package(self.spec, "coverage")

        self.sandbox = get_sandbox(no_sandbox=opts.no_sandbox)
        self.builder = EnvBuilder(sandbox=self.sandbox)
        self._local = threading.local()
        self._benches: list[Workbench] = []
        self._lock = threading.Lock()
        self.log = output.CandidateLog(self.out / "candidates.jsonl")
        self.tasks_path = self.out / "tasks.jsonl"
        self.written = {json.loads(line)["instance_id"] for line in self.tasks_path.read_text().splitlines()
                        if line.strip()} if self.tasks_path.exists() else set()
        self.repo = output.TasksRepo(self.out / "repos" / self.name.replace("/", "__"), source)
        self.kept_now = len(self.written)  # tasks.jsonl holds at most --max-tasks, resumed or not

    def bench(self) -> Workbench:
        bench = getattr(self._local, "bench", None)
        if bench is None:
            bench = Workbench(self.source, self.commit, self.work_spec, builder=self.builder,
                              sandbox=self.sandbox, suite_args=self.test_args)
            self._local.bench = bench
            with self._lock:
                self._benches.append(bench)
        return bench

    def close(self) -> None:
        for bench in self._benches:
            bench.close()

    def baseline(self) -> tuple[coverage_map.CoverageMap, Baseline, dict[str, float]]:
        """The coverage map and the passing tests, from the output folder when a run made them."""
        cache = self.out / "baseline.json"
        if cache.exists():
            data = json.loads(cache.read_text())
            if data.get("commit") == self.commit:
                cmap = coverage_map.CoverageMap.from_json(data["coverage"])
                return cmap, Baseline(set(data["passed"]), data["suite_seconds"]), data["seconds"]
        self.progress("baseline: the suite under coverage, then alone (once per commit; the candidates follow)")
        bench = self.bench()
        t0 = time.monotonic()
        cmap, mapped = coverage_map.map_tests(bench, timeout=self.opts.timeout or 3600)
        t1 = time.monotonic()
        plain = bench.run(None, timeout=self.opts.timeout or 3600)
        t2 = time.monotonic()
        if not (mapped.ok and plain.ok):
            bad = mapped if not mapped.ok else plain
            raise InputError(self.source, f"the suite does not run at {self.commit[:12]}: {bad.status} "
                             f"{bad.reason} {bad.output[-300:]}", hint="check the recipe with `issuebench setup`")
        passed = {t for t, s in mapped.status_map.items() if s.value == "PASSED"
                  and plain.status_map.get(t) is not None and plain.status_map[t].value == "PASSED"}
        seconds = {"coverage_run": t1 - t0, "suite_run": t2 - t1, "tests": len(plain.status_map),
                   "passing": len(passed)}
        cache.write_text(json.dumps({"commit": self.commit, "coverage": cmap.to_json(), "passed": sorted(passed),
                                     "suite_seconds": t2 - t1, "seconds": seconds}))
        return cmap, Baseline(passed, t2 - t1), seconds

    def check_here(self, cmap: coverage_map.CoverageMap, base: Baseline, timeout: float,
                   cand: Candidate) -> tuple[Outcome, str]:
        """Validate one candidate in this thread's workbench (a local worker's side of run_phase);
        the worker is this process, so it is not named."""
        return check(self.bench(), cand, cmap, base, timeout=timeout, scope=self.opts.scope), ""

    def record(self, cand: Candidate, result: Outcome, worker: str = "") -> dict:
        """A validated candidate into the log (and, kept, into the tasks): wherever it was checked
        (`worker`: the host and pid that checked it, when not this process)."""
        row = {"id": cand.id, "generator": cand.generator, "status": result.status,
               "seconds": round(result.seconds, 3), "runs": result.runs, "tests": result.tests,
               "functions": [list(f) for f in cand.functions], "description": cand.description,
               "reason": result.reason[:300], **({"worker": worker} if worker else {})}
        if result.status == KEPT:
            if not self.reserve():
                # Validated while the last places were taken (by a worker beside it, or in an
                # earlier phase): not logged, so a run with a higher --max-tasks takes it.
                return {**row, "status": "not kept: --max-tasks reached"}
            row["instance_id"] = self.keep(cand, result)
        self.log.add(row)
        return row

    def full(self) -> bool:
        return self.opts.max_tasks is not None and self.kept_now >= self.opts.max_tasks

    def reserve(self) -> bool:
        """Take one of the --max-tasks places; False when they are all taken."""
        with self._lock:
            if self.full():
                return False
            self.kept_now += 1
            return True

    def keep(self, cand: Candidate, result: Outcome) -> str:
        owner_name = self.name.replace("/", "__")
        instance_id = f"{owner_name}.{self.commit[:8]}.{cand.generator}__{cand.id[:8]}"
        if instance_id not in self.written:
            broken = self.repo.commit_broken(self.commit, cand, instance_id)
            row = make_row(self, cand, result, instance_id, broken)
            output.append_row(self.tasks_path, row, self._lock)
            self.written.add(instance_id)
        return instance_id
