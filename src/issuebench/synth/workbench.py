"""A workbench: one workspace at the commit, its environment, and the sandbox to run tests in.

Each validation worker owns one. A candidate's files are written into the workspace, the tests
run in the sandbox exactly as `eval` runs them (same environment, same limits, no network), and
the files are put back. Making a workspace per candidate would cost more than most test runs.
"""

from __future__ import annotations

import shlex
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from issuebench import config
from issuebench.harness import create_workspace, ensure_env_with_overlay
from issuebench.models import EnvSpec, TestStatusMap
from issuebench.parsers import get_parser
from issuebench.sandbox import Limits, RunStatus
from issuebench.synth.base import Change
from issuebench.synth.warm import WarmWorker, pytest_mode

SCRATCH = ".issuebench-synth"  # inside the workspace, hidden from git and from pytest (a dot folder)
PLUGIN = "issuebench_covmap"


@dataclass
class SuiteRun:
    status: RunStatus
    status_map: TestStatusMap = field(default_factory=dict)
    output: str = ""
    seconds: float = 0.0
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == RunStatus.OK and bool(self.status_map)


def base_command(test_cmd: str, workspace: Path) -> list[str]:
    """The test command without the paths it names, so node ids can replace them."""
    out = []
    for token in shlex.split(test_cmd):
        if not token.startswith("-") and out and (workspace / token).exists():
            continue
        out.append(token)
    return out


class Workbench:
    def __init__(self, source: Path, commit: str, spec: EnvSpec, *, builder, sandbox,
                 suite_args: Sequence[str] = (), warm: bool = True) -> None:

        self.spec = spec
        self.sandbox = sandbox
        self.suite_args = list(suite_args)
        self.warm = warm            # runs of given test ids go to a warm worker when it can serve them
        self._workers: list = []   # WarmWorker, two taking turns (see _warm_run)
        self._turn = 0
        self.ws = create_workspace(source, commit)
        try:
            self.env = ensure_env_with_overlay(builder, spec, self.ws)
        except BaseException:
            shutil.rmtree(self.ws, ignore_errors=True)
            raise
        scratch = self.ws / SCRATCH
        scratch.mkdir(exist_ok=True)
        plugin = Path(__file__).parent / "data" / f"{PLUGIN}.py"
        shutil.copyfile(plugin, scratch / f"{PLUGIN}.py")
        exclude = self.ws / ".git" / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a") as fh:
            fh.write(f"\n/{SCRATCH}/\n")

    @property
    def scratch(self) -> Path:
        return self.ws / SCRATCH

    def command(self, targets: Sequence[str] | None, extra: Sequence[str] = ()) -> str:
        if targets is None:
            argv = [*shlex.split(self.spec.test_cmd), *self.suite_args]
        else:
            argv = [*base_command(self.spec.test_cmd, self.ws), *targets]
        return shlex.join([*argv, *extra])

    def run(self, targets: Sequence[str] | None, *, timeout: float, extra: Sequence[str] = (),
            coverage: bool = False) -> SuiteRun:
        """Run the suite (targets None) or the given test ids; parse the results."""

        extra = [*extra, "-p", "no:cacheprovider"]
        env = self.env.run_env()
        if coverage:
            extra += ["-p", PLUGIN]
            path = env.get("PYTHONPATH")
            env["PYTHONPATH"] = SCRATCH + (f":{path}" if path else "")
        body = "\n".join([*self.spec.pre_test, self.command(targets, extra)])
        started = time.monotonic()
        res = self._warm_run(targets, extra, timeout) if targets is not None and not coverage else None
        if res is None:
            res = self.sandbox.run(["bash", "-c", body], workspace=self.ws, binds=self.env.binds(), env=env,
                               limits=Limits(timeout=timeout), network=False, cwd=config.TESTBED_PATH)
        run = SuiteRun(res.status, output=res.output, seconds=time.monotonic() - started, reason=res.reason)
        if res.status == "ok":
            run.status_map = get_parser(self.spec.log_parser)(res.output)
        return run

    def apply(self, changes: Sequence[Change], *, undo: bool = False) -> None:
        for change in changes:
            path = self.ws / change.path
            # Bytes, not text: newline="" semantics, so a CRLF file stays CRLF.
            path.write_bytes((change.before if undo else change.after).encode())
            # A .pyc is trusted when the source's mtime (whole seconds) and size match the ones it
            # records, and a same-size bug written in the same second as the last version would
            # pass: drop the compiled copies (pytest's rewritten ones too) of every changed file.
            for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
                pyc.unlink(missing_ok=True)

    @property
    def warm_starts(self) -> int:
        """Warm workers started so far (a timeout or a killed worker means a new one)."""
        return sum(w.starts for w in self._workers)

    @property
    def warm_disabled(self) -> str:
        return next((w.disabled for w in self._workers if w.disabled), "")

    def _warm_run(self, targets: Sequence[str], extra: Sequence[str], timeout: float):  # -> RunResult | None
        """The run on the warm worker; None when it cannot serve it (then it runs the plain way)."""

        if not self.warm or self.sandbox.name != "bwrap" or self.spec.pre_test:
            return None
        found = pytest_mode(base_command(self.spec.test_cmd, self.ws))
        if found is None:
            return None
        if not self._workers:
            # Two workers taking turns: a worker's children share its hash seed (str hashes, so
            # set order), where plain runs each draw their own; consecutive runs, such as a bug's
            # first and confirming run, must not share one, or a test that fails only under some
            # set orders would be confirmed instead of found flaky.
            self._workers = [WarmWorker(self.ws, self.env.python, binds=self.env.binds(), env=self.env.run_env())
                             for _ in range(2)]
        worker = self._workers[self._turn % 2]
        self._turn += 1
        mode, args = found
        return worker.run(mode, [*args, *targets, *extra], timeout=timeout)

    def close(self) -> None:
        for worker in self._workers:
            worker.close()
        shutil.rmtree(self.ws, ignore_errors=True)
