"""The Python to try first: the best-ranked one for which every package has a wheel at the date.

Setup ranks Pythons by what the repository says (requires-python, CI, classifiers) and tries the
newest first. A pinned range can leave that Python without wheels: pint 0.25 asks
`numpy>=1.23,<2.0.0`, which has no wheel for 3.13, so its environment compiled numpy from source
for over half an hour and the stage ran out of time. uv resolves the plan's packages with wheels
alone, as of the date, for the first Pythons of the ranking (seconds, no build); when the first
needs a source build and a later one does not, the later one goes first. When every Python needs
one (a package that is only an sdist), or uv cannot say (no index), the order stays.
"""

from __future__ import annotations

import functools
import subprocess

from issuebench.envs import effective_cutoff
from issuebench.envs import uv_binary as uv_binary
from issuebench.setup.plan import Plan

TRIED = 3        # Pythons of the ranking looked at


@functools.lru_cache(maxsize=128)
def wheels_resolve(packages: tuple[str, ...], python: str, cutoff: str) -> bool | None:
    """Do `packages` resolve to wheels alone on `python` as of `cutoff`? None: uv cannot say."""
    uv = uv_binary()
    if not uv or not packages:
        return None
    argv = [uv, "pip", "compile", "-", "--exclude-newer", cutoff, "--python-version", python,
            "--only-binary", ":all:", "--no-header", "--no-annotate", "--quiet"]
    try:
        done = subprocess.run(argv, input="\n".join(packages), capture_output=True, text=True, timeout=120,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode == 0:
        return True
    # A resolution that fails names what has no wheel; an index that cannot be reached says
    # nothing about wheels.
    return False if "No solution found" in done.stderr or "hint:" in done.stderr else None


def with_wheel_python(plan: Plan) -> Plan:
    """The plan on the best-ranked Python whose packages all have wheels, when that is not its own."""
    packages = tuple(plan.spec.packages)
    # Unbounded requirements take the date's newest releases, made for the Pythons of the date;
    # only a bound (`<2.0`, `==1.26.4`, `~=1.2`) can hold a package back from a newer Python.
    if not plan.spec.exclude_newer or len(plan.pythons) < 2 or not any(_bounded(p) for p in packages):
        return plan

    def resolves(python: str) -> bool | None:
        return wheels_resolve(packages, python, effective_cutoff(plan.spec.exclude_newer, python)
                              or plan.spec.exclude_newer or "")

    if resolves(plan.spec.python) is not False:
        return plan
    for python in [p for p in plan.pythons[:TRIED] if p != plan.spec.python]:
        if resolves(python):
            note = (f"setup: Python {plan.spec.python} has no wheel of some package at the date (a source "
                    f"build); {python} has wheels of all, so it goes first")
            return plan.copy(python=python, notes=[*plan.spec.notes, note])
    return plan


def _bounded(requirement: str) -> bool:
    spec = requirement.split(";", 1)[0]
    return any(op in spec for op in ("<", "==", "~="))
