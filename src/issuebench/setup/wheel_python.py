"""The Python to try first: the best-ranked one for which every package has a wheel at the date.

Setup ranks Pythons by what the repository says (requires-python, CI, classifiers) and tries the
newest first. A pinned range can leave that Python without wheels: pint 0.25 asks
`numpy>=1.23,<2.0.0`, which has no wheel for 3.13, so its environment compiled numpy from source
for over half an hour and the stage ran out of time. uv resolves the plan's packages with wheels
alone, as of the date, for the first Pythons of the ranking (seconds, no build); when the first
needs a source build and a later one does not, the later one goes first. When every Python needs
one, or uv cannot say (no index), the order stays. A package that never had a wheel by the date
(memory_profiler, docopt) says nothing about which Python: it is left to its sdist and the
question asked of the rest. Asked with it, uv backtracked through every version of every other
package before saying no (10-16 s a Python, three Pythons, each version group of each
repository's setup: xmlschema's collect spent 44 of a 112 s setup there).
"""

from __future__ import annotations

import functools

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from issuebench.envs import compile_at_date, effective_cutoff
from issuebench.index import index_files
from issuebench.setup.log_regex import compile_log_pattern
from issuebench.setup.plan import Plan

TRIED = 3        # Pythons of the ranking looked at


# How uv names a package it found no wheel of: "all versions of memory-profiler have no usable
# wheels", "docopt==0.6.2 has no usable wheels".
_NO_WHEELS = compile_log_pattern(r"(?:all versions of )?([A-Za-z0-9][A-Za-z0-9._-]{0,100})(?:==\S{1,60})? "
                                 r"(?:have|has) no usable wheels")
ROUNDS = 3       # resolutions per question: each may name more packages that never had a wheel


@functools.lru_cache(maxsize=128)
def wheels_resolve(packages: tuple[str, ...], python: str, cutoff: str) -> bool | None:
    """Do `packages` resolve to wheels alone on `python` as of `cutoff`, leaving packages that
    never had a wheel to their sdists? None: uv cannot say."""
    if not packages:
        return None
    # A package asked for that never had a wheel is left out of the question (allowing its sdist
    # would build it for its metadata: 10 s); one it pulls in is named by a failure, then allowed.
    asked = [line for line in packages if not never_a_wheel(_name(line), cutoff)]
    if not asked:
        return None
    exempt: list[str] = []
    for _ in range(ROUNDS):
        done = compile_at_date(asked, exclude_newer=cutoff, python_version=python,
                               extra=["--only-binary", ":all:", *(f"--no-binary={name}" for name in exempt)])
        if done is None:
            return None
        if done.returncode == 0:
            return True
        # A resolution that fails names what has no wheel; an index that cannot be reached says
        # nothing about wheels.
        if "No solution found" not in done.stderr and "hint:" not in done.stderr:
            return None
        named = {canonicalize_name(m) for m in _NO_WHEELS.findall(done.stderr[-20000:])}
        new = sorted(name for name in named - set(exempt) if never_a_wheel(name, cutoff))
        if not new:
            return False
        exempt += new
    return False


def _name(requirement: str) -> str | None:
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return None


@functools.lru_cache(maxsize=512)
def never_a_wheel(name: str | None, cutoff: str) -> bool:
    """No wheel of `name`, for any Python, was on the index by `cutoff` (False when it cannot say)."""
    if not name:
        return False
    try:
        files = index_files(name)
    except (OSError, ValueError):
        return False
    # An entry without an upload time (an index without PEP 700) counts as early: never exempt.
    return not any(f.get("filename", "").endswith(".whl") and (f.get("upload-time") or "") <= cutoff
                   for f in files)


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
