"""Build a plan's environment and run tests in it, with progress while it runs.

Attempts reuse what earlier ones built: the uv cache makes installing the same packages again
cheap, and a later attempt on the same Python reuses the earlier attempt's workspace (tracked
files restored), so in-place compiled extensions and build folders are not built again.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench import config
from issuebench.envs import EnvBuilder
from issuebench.errors import IssuebenchError
from issuebench.harness import ensure_env_with_overlay, fill_submodules
from issuebench.models import EnvSpec, TestStatus
from issuebench.parsers import get_parser
from issuebench.sandbox import Bind, Limits, RunStatus, get_sandbox
from issuebench.setup.data import DATA_DIR
from issuebench.setup.log_regex import compile_log_pattern
from issuebench.setup.offline_tests import locale_failures, offline_failures, program_failures
from issuebench.setup.plan import Plan
from issuebench.setup.source import SourceTree

_PASSING = (TestStatus.PASSED, TestStatus.XFAIL)
PROGRESS_SECONDS = 15.0
Progress = Callable[[str], None]
# Seconds the tests of one file may take in a judging run (data/issuebench_file_budget.py).
FILE_BUDGET = 60.0
BUDGET_PLUGIN = "issuebench_file_budget"
_SANDBOX_PLUGIN_DIR = "/tmp/.issuebench-setup"
_CUT = compile_log_pattern(r"^ISSUEBENCH-FILE-CUT (\S+)")
_STARTED = compile_log_pattern(r"^ISSUEBENCH-FILE-START (\S+)")
# Files a judging run may lose to the memory limit before the run itself counts as killed.
MEMORY_CUTS = 2


# The log parsers (issuebench.parsers, shared with eval) use backtracking patterns, some of them
# quadratic in a line's length; a line longer than this is cut before they read it, so parsing
# stays linear in the log (a result line is far shorter: an id and its outcome).
MAX_PARSED_LINE = 1000


def parse_log(parser: str, output: str) -> dict[str, TestStatus]:
    """The parser's status map of a log whose overlong lines (a progress bar's) are cut first."""

    lines = output.split("\n")           # a progress bar's \r does not end a line for every parser
    if any(len(line) > MAX_PARSED_LINE for line in lines):
        output = "\n".join(line[:MAX_PARSED_LINE] for line in lines)
    return dict(get_parser(parser)(output))


def import_failure(test_id: str, status: TestStatus) -> bool:
    """A test module that could not be imported, as the parsers report it: pytest's error on the
    file itself (`tests/test_x.py`), unittest's `unittest.loader._FailedTest.test_x`."""
    if status != TestStatus.ERROR:
        return False
    return ("::" not in test_id and test_id.endswith(".py")) or "_FailedTest" in test_id


@dataclass
class Run:
    """One build + test run."""

    stage: str                  # "build" | "test"
    log: str = ""
    statuses: dict[str, TestStatus] = field(default_factory=dict)
    # Test files whose time budget ran out: every result of theirs is left out of `statuses`.
    cut_files: list[str] = field(default_factory=list)
    # Test modules that failed to import for want of an absent submodule's files (left out).
    lacking_clone: list[str] = field(default_factory=list)
    # Test functions the judged files define (None: not counted); bounds the floor on tests run.
    defined_tests: int | None = None
    # The sandbox's status when a limit ended the run ("" when it ended by itself).
    limit: str = ""

    @property
    def import_failed(self) -> list[str]:
        """Test modules that failed to import (each stands for all the tests it would hold)."""
        return sorted(t for t, s in self.statuses.items() if import_failure(t, s))

    @property
    def skipped(self) -> list[str]:
        return sorted(t for t, s in self.statuses.items() if s == TestStatus.SKIPPED)

    @property
    def counted(self) -> list[str]:
        """Tests that ran: neither skipped nor a module that failed to import."""
        return [t for t, s in self.statuses.items() if s != TestStatus.SKIPPED and not import_failure(t, s)]

    @property
    def passed(self) -> int:
        return sum(1 for s in self.statuses.values() if s in _PASSING)

    @property
    def failing(self) -> list[str]:
        return sorted(t for t, s in self.statuses.items() if s in (TestStatus.FAILED, TestStatus.ERROR))

    @property
    def offline(self) -> list[str]:
        """Failing tests whose own report shows they reached for the internet (never given)."""
        return offline_failures(self.log, self.failing)

    @property
    def lacking_program(self) -> dict[str, str]:
        """Failing test -> the server program its own report says is absent (none on this machine)."""
        return program_failures(self.log, self.failing)

    @property
    def lacking_locale(self) -> list[str]:
        """Failing tests whose own report says the locale they set is not on this machine."""
        return locale_failures(self.log, self.failing)

    def import_failure_weight(self) -> float:
        """How many failing tests one module that failed to import stands for: the mean number of
        tests per file among the files that ran (one, when the ids do not name files)."""
        files = {t.split("::", 1)[0] for t in self.counted if "::" in t}
        return max(1.0, len(self.counted) / len(files)) if files else 1.0

    def ratio(self) -> float:
        """Passed over judged tests, leaving out those that fail only for want of the network, of
        a server program or of a locale this machine lacks (no environment could make them pass
        here); a module that failed to import counts as all the tests it would hold failing, not as
        one error."""
        left_out = {*self.offline, *self.lacking_program, *self.lacking_locale}
        judged = len(self.counted) - len([t for t in self.counted if t in left_out])
        # A module that fetches from the internet when imported (cf-xarray's tutorial datasets)
        # still counts: left out, it let setup accept a suite whose main modules never import
        # offline, and every task was then refused as having no fail-to-pass test, a worse
        # account than the refusal's "the tests need the internet".
        judged_all = judged + self.import_failure_weight() * len(self.import_failed)
        return self.passed / judged_all if judged_all > 0 else 0.0


def own_install_failed(build_log: str) -> bool:
    """Did the build stop at the project's own install (`pip install ... -e .`, `setup.py develop`)?"""
    command = last_step(build_log).split("\n", 1)[0]
    return command.startswith("$ ") and (command.rstrip().endswith(" -e .") or "setup.py develop" in command)


def last_step(build_log: str) -> str:
    """The build log from its last command (`$ ...` line) on."""
    start = build_log.rfind("\n$ ")
    return build_log[start + 1:] if start >= 0 else build_log


@dataclass
class Built:
    env: Any
    workspace: Path


class Runner:
    """Builds envs with EnvBuilder and runs tests in the sandbox."""

    def __init__(self, builder: Any, sandbox: Any, timeout: float, work_dir: Path | None,
                 tree: SourceTree, progress: Progress | None = None, *, file_budget: float = FILE_BUDGET,
                 deadline: float | None = None) -> None:
        self._builder = builder
        self._sandbox = sandbox
        self.timeout = timeout
        self.file_budget = file_budget
        self.deadline = deadline           # time.monotonic() past which no test run may go on
        self.tree = tree
        self.progress = progress
        self.root = Path(work_dir) if work_dir else Path(
            tempfile.mkdtemp(prefix="setup-", dir=config.workspaces_dir()))
        self._owns_root = work_dir is None
        self._workspaces: dict[str, Path] = {}     # python minor -> workspace of its last attempt

    @property
    def sandbox(self) -> Any:
        if self._sandbox is None:

            self._sandbox = get_sandbox()
        return self._sandbox

    @property
    def builder(self) -> Any:
        if self._builder is None:

            self._builder = EnvBuilder(sandbox=self.sandbox)
        return self._builder

    def say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)

    def build(self, plan: Plan) -> tuple[Built | None, Run | None]:
        """The plan's env over a workspace, or the failed build as a Run."""
        spec = plan.built_spec()
        workspace = self._workspace(spec.python, spec.submodules)
        self.say(f"building python {spec.python} with {len(spec.packages)} packages")
        try:
            env = self._ensure(spec, workspace)
        except IssuebenchError as exc:
            return None, Run("build", log=self._build_log(spec, exc))
        return Built(env, workspace), None

    def time_left(self) -> float:
        """Seconds a test run may take now: the test timeout, cut to what the deadline leaves."""
        if self.deadline is None:
            return self.timeout
        return max(10.0, min(self.timeout, self.deadline - time.monotonic()))

    def test(self, built: Built, plan: Plan, command: str, what: str, *, per_file: bool = False) -> Run:
        """Run `command` over the built workspace and parse its log with the plan's parser.

        `per_file` (pytest): each test file gets `file_budget` seconds; a file cut for time is
        named in the run's `cut_files` and its results are left out."""
        budgeted = per_file and plan.runner == "pytest" and self.file_budget > 0
        run = self._test(built, plan, f"{command} -p {BUDGET_PLUGIN}" if budgeted else command, what, budgeted)
        if budgeted and not run.statuses and BUDGET_PLUGIN in run.log:
            # The command hides the plugin (a PYTHONPATH of its own, say): run without a budget.
            self.say(f"  {what}: the file budget plugin could not load; running without it")
            run = self._test(built, plan, command, what, False)
        elif budgeted:
            run = self._without_memory_hogs(built, plan, f"{command} -p {BUDGET_PLUGIN}", what, run)
        return run

    def _without_memory_hogs(self, built: Built, plan: Plan, command: str, what: str, run: Run) -> Run:
        """A judging run the memory limit killed is run again without the file that was running
        then (the plugin's last `ISSUEBENCH-FILE-START` line), which is cut as a file out of time
        is: one test file that fills the memory limit (zarr's benchmarks) says nothing of whether
        the environment works."""
        hogs: list[str] = []
        while run.limit == RunStatus.MEMORY_LIMIT and len(hogs) < MEMORY_CUTS:
            started = [m.group(1) for m in _STARTED.finditer(run.log)]
            if not started or started[-1] in hogs:
                break
            hog = started[-1]
            hogs.append(hog)
            self.say(f"  {what}: {hog} filled the memory limit: left out of the judgement")
            # A file named on the command line runs whatever --ignore says; one found by walking
            # the folders is left out by it.
            named = re.compile(r"(?<=\s)" + re.escape(shlex.quote(hog)) + r"(?=\s|$)")
            command = named.sub("", command, count=1) if named.search(command) else \
                f"{command} --ignore={shlex.quote(hog)}"
            run = self._test(built, plan, command, what, True)
        if hogs:
            run.cut_files = sorted({*run.cut_files, *hogs})
        return run

    def _test(self, built: Built, plan: Plan, command: str, what: str, budgeted: bool) -> Run:

        out = built.workspace.parent / f"{built.workspace.name}.out"
        self.say(f"testing ({what})")
        binds, env = built.env.binds(), built.env.run_env()
        if budgeted:
            sandboxed = getattr(self.sandbox, "name", "") != "none"
            plugin_dir = _SANDBOX_PLUGIN_DIR if sandboxed else str(DATA_DIR)
            if sandboxed:
                binds = [*binds, Bind(DATA_DIR, dst=_SANDBOX_PLUGIN_DIR)]
            env = {**env, "ISSUEBENCH_FILE_BUDGET": f"{self.file_budget:g}",
                   "PYTHONPATH": ":".join(filter(None, [env.get("PYTHONPATH", ""), plugin_dir]))}
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(out, what, stop), daemon=True)
        watcher.start()
        try:
            # The recipe's pre_test steps first, as every graded run of its tasks has them.
            result = self.sandbox.run(["bash", "-c", "\n".join([*plan.spec.pre_test, command])],
                                      workspace=built.workspace,
                                      binds=binds, env=env, limits=self._limits(plan),
                                      cwd=config.TESTBED_PATH, output_path=out)
        finally:
            stop.set()
            watcher.join()
            out.unlink(missing_ok=True)
        log = result.output if result.status == RunStatus.OK else f"{result.output}\n[{result.status}] {result.reason}"
        try:
            statuses = parse_log(plan.spec.log_parser, result.output)
        except Exception as exc:  # a parser crash is a failed attempt with a reason, not a crash
            statuses = {}
            log += f"\n[parser {plan.spec.log_parser} failed: {exc}]"
        cut = sorted({m.group(1) for m in _CUT.finditer(result.output)}) if budgeted else []
        for path in cut:
            self.say(f"  {what}: {path} ran out of its {self.file_budget:g}s: left out of the judgement")
        statuses = {t: s for t, s in statuses.items() if t.split("::", 1)[0] not in cut}
        limit = "" if result.status == RunStatus.OK else str(result.status)
        return Run("test", log=log, statuses=statuses, cut_files=cut, limit=limit)

    def _limits(self, plan: Plan) -> Limits:
        """The run's limits: what is left of the time, and the recipe's cap on processes if it has one."""
        if plan.spec.max_procs is None:
            return Limits(timeout=self.time_left())
        return Limits(timeout=self.time_left(), max_procs=plan.spec.max_procs)

    def _watch(self, out: Path, what: str, stop: threading.Event) -> None:
        """Report elapsed time and output so far until `stop` (the run's log grows as it goes)."""
        started = time.monotonic()
        while not stop.wait(PROGRESS_SECONDS):
            try:
                text = out.read_bytes()[-20000:].decode("utf-8", errors="replace")
            except OSError:
                text = ""
            lines = [ln for ln in text.splitlines() if ln.strip()]
            last = lines[-1][:100] if lines else "no output yet"
            self.say(f"  {what}: {time.monotonic() - started:.0f}s, {out.stat().st_size if out.exists() else 0} "
                     f"bytes of output; last: {last}")

    def _workspace(self, python: str, submodules: dict[str, str]) -> Path:
        """The earlier attempt's workspace on this Python with tracked files restored, else a
        fresh export of the snapshot, its submodules filled from clones at hand."""
        previous = self._workspaces.get(python)
        if previous is not None and (previous / ".git").is_dir():
            done = subprocess.run(["git", "-C", str(previous), "checkout", "-q", "--", "."],
                                  capture_output=True, check=False)
            if done.returncode == 0:
                return previous
        workspace = self.root / f"attempt-py{python}-{len(list(self.root.iterdir()))}"
        shutil.rmtree(workspace, ignore_errors=True)
        self.tree.export(workspace)
        if submodules and self.tree.commit:
            # A submodule's clone is looked for beside the repository's own (a folder of
            # owner__name clones, as --repos takes) and in the clone cache; never fetched.
            for note in fill_submodules(submodules, workspace, self.tree.commit, self.tree.root.parent,
                                        allow_clone=False, holder=self.tree.root):
                self.say(note)
        self._workspaces[python] = workspace
        return workspace

    def _ensure(self, spec: EnvSpec, workspace: Path) -> Any:
        if (workspace / ".git").is_dir():

            # What the install writes into the tree (egg-info, in-place extensions) comes with an
            # env built by an earlier run, as it does for the harness.
            return ensure_env_with_overlay(self.builder, spec, workspace)
        return self.builder.ensure(spec, workspace)

    def _build_log(self, spec: EnvSpec, exc: IssuebenchError) -> str:
        """The failing step of the build log when the builder kept one, else the error's own message.

        Only the last command's output: errors the builder recovered from earlier (an old sdist it
        then built with the era's tools) are not why the build failed, and diagnosing them sent
        requests 2.3 round setuptools pins while its old pip lacked `--no-build-isolation`."""
        root = getattr(self.builder, "root", None)
        if root is not None:
            failed = Path(root) / f"{spec.env_hash()}.failed.log"
            if failed.is_file():
                return last_step(failed.read_text(encoding="utf-8", errors="replace")) + "\n" + exc.message
        return exc.message

    def close(self) -> None:
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)
