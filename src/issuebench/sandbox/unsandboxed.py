"""--no-sandbox: run on the host, still with a timeout, bounded output, rlimits and (when
writable) per-run cgroups, but with the network, the file system and $HOME all reachable."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from issuebench.config import TESTBED_PATH
from issuebench.sandbox.bwrap import BASE_ENV
from issuebench.sandbox.supervise import supervise
from issuebench.sandbox.types import Bind, Limits, RunResult

log = logging.getLogger("issuebench.sandbox")
_warned = False


def _warn_once() -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("running UNSANDBOXED (--no-sandbox): patches run with network access and can read "
                    "and write your files; only use this for patches you trust")


class UnsandboxedRunner:
    name = "none"

    def run(self, argv: list[str], *, workspace: Path, binds: Sequence[Bind] = (),
            env: Mapping[str, str] | None = None, limits: Limits | None = None,
            network: bool = False, cwd: str = TESTBED_PATH,
            output_path: Path | None = None, protect_git: bool = True) -> RunResult:
        _warn_once()
        limits = limits or Limits()
        workspace = Path(workspace).resolve()
        # Without a mount namespace there is no TESTBED_PATH; run where the workspace really is.
        if cwd == TESTBED_PATH or cwd.startswith(TESTBED_PATH + "/"):
            host_cwd = workspace / cwd[len(TESTBED_PATH):].lstrip("/")
        else:
            host_cwd = Path(cwd)
        scratch = Path(tempfile.mkdtemp(prefix="issuebench-run-"))
        try:
            home = scratch / "home"
            home.mkdir()
            run_env = {**BASE_ENV, "HOME": str(home), "TMPDIR": str(scratch),
                       "ISSUEBENCH_TESTBED": str(workspace), **(env or {})}
            if "PATH" not in (env or {}):
                run_env["PATH"] = os.environ.get("PATH", BASE_ENV["PATH"])
            result = supervise(argv, cwd=host_cwd, env=run_env, limits=limits, output_path=output_path,
                               sandbox_name=self.name)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        result.notes.append("unsandboxed: no network, file system or $HOME isolation")
        return result
