"""An environment build's log (<env>/build.log) and the failure of one of its steps."""

from __future__ import annotations

import re
import time
from pathlib import Path

from issuebench.errors import IssuebenchError


class BuildLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

        self.notes: list[str] = []   # what the build decided on its own, for the manifest
        self.cutoff_exceptions: dict[str, str] = {}   # packages taken as of a later date, and that date

    def write(self, text: str) -> None:
        self._handle.write(text if text.endswith("\n") else text + "\n")
        self._handle.flush()

    def note(self, text: str) -> None:
        self.write(text)
        if text.startswith(("# substituted", "# cutoff", "# builds")):
            self.notes.append(text.lstrip("# "))

    def close(self) -> None:
        self._handle.close()

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def took(start: float, returncode: int | None) -> str:
    """The line after a step's output: how long it ran (the build's profile: which steps resolve,
    download or compile for how long, and what a failed attempt cost before the next one)."""
    return f"# took {time.monotonic() - start:.1f}s, exit {returncode}"


class StepFailed(Exception):
    """A build step failed; `output` is what the failing tool printed (the resolver's hints)."""

    def __init__(self, reason: str, output: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.output = output


# pip's frame around a failing build: it says that the build failed, not why (the cause is the
# build's own output inside the frame: "frobnicator error: ...", "Could not satisfy constraints ...").
_PIP_FRAME = ("error: subprocess-exited-with-error", "error: metadata-generation-failed",
              "error: failed-wheel-build-for-install", "did not run successfully",
              "Encountered error while generating package metadata", "This error originates from a subprocess",
              "This is an issue with the package mentioned above", "See above for", "with status 'error'")


def last_error_line(text: str) -> str:
    """The last line of a failed step's output that says error or failed (pip's frame left aside), else
    its last line."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    for line in reversed(lines):
        if re.search(r"error|Error|ERROR|failed|No solution|unsatisfiable", line) and \
                not any(frame in line for frame in _PIP_FRAME):
            return line[:400]
    return lines[-1][:400] if lines else "no output"


# A locked package the registry no longer serves (unpublished, or a version it never had): the
# install's real cause, which its closing line ("Failed with errors") does not say.
# Most telling first: the lines that name the package, then npm's bare error code.
_REGISTRY_MISS = (re.compile(r"failed to provide the requested resource|is not in this registry|No matching version found"),
                  re.compile(r"E404|ETARGET"))


def registry_miss_line(text: str) -> str | None:
    """The first line of an npm, yarn or pnpm log that names a package the registry cannot give."""
    for pattern in _REGISTRY_MISS:
        for line in text.splitlines():
            if pattern.search(line):
                return "the registry cannot give a locked package: " + line.strip().lstrip("➤").strip()[:300]
    return None


class EnvBuildError(IssuebenchError):
    """The environment could not be built; `reason` is what the instance's status should say."""

    def __init__(self, env_hash: str, reason: str, *, hint: str | None = None) -> None:
        super().__init__(f"environment {env_hash} failed to build: {reason}",
                         hint=hint or "fix the recipe, then rerun with --rebuild "
                                      "(or `issuebench envs prune --failed`)")
        self.env_hash = env_hash
        self.reason = reason
