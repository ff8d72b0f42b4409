"""Tiny launcher run between fork and the sandboxed program: join cgroups, set rlimits, exec.

Run as `python -I -S _launch.py SPEC_JSON ARGV...`. A separate program rather than a
`preexec_fn`, because preexec_fn is unsafe in a process with threads (the harness runs several
instances at once), and the join must happen before any process of the run exists.
"""

import json
import os
import resource
import sys

LAUNCH_FAILED = 125
TAG = "issuebench-launch:"


def main() -> None:
    spec = json.loads(sys.argv[1])
    argv = sys.argv[2:]
    _die_with(spec.get("parent"))
    try:
        for procs in spec.get("cgroups", []):
            with open(procs, "w") as handle:
                handle.write(str(os.getpid()))
        for name, value in spec.get("rlimits", {}).items():
            resource.setrlimit(getattr(resource, f"RLIMIT_{name}"), (value, value))
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"{TAG} cannot start {argv[:1]}: {exc}\n")
        sys.stderr.flush()
        os._exit(LAUNCH_FAILED)


def _die_with(parent: "int | None") -> None:
    """SIGKILL when the harness that started this dies (kept across exec), and stop at once if it
    is already gone: nothing would hold the run to its limits."""
    if not parent:
        return
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(LAUNCH_FAILED)


if __name__ == "__main__":
    main()
