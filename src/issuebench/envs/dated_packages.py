"""`uv pip install` as of a date, with the exceptions the date has to allow.

The rule is in dating.py: every package as of the task's date, exact pins exempt. Installing by it
meets cases the resolver reports one at a time, each answered by a general rule and said in the
manifest's decisions: conda-only entries left out, yanked-only requirements pinned, old sdists built
with the era's build tools or else taken as their first wheel for the interpreter, and the
dependencies only newer pins need taken as of the newest pin's publication.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from issuebench.envs.build_log import BuildLog, StepFailed
from issuebench.envs.build_tools import legacy_build_constraints
from issuebench.envs.dated_install import compile_command
from issuebench.envs.dating import (
    NO_CUTOFF,
    date_args,
    exempt_from_cutoff,
    failed_builds,
    filtered_by_cutoff,
    newest_pin_date,
    not_on_index,
    only_yanked,
    unsatisfiable_requirements,
)
from issuebench.envs.python_support import first_admitting, refused
from issuebench.envs.requirements import drop_from_conda_files, exact_pins
from issuebench.index import first_wheel_after
from issuebench.models import EnvSpec

# Rounds of "the resolver names a dependency the cutoff hides; take it as of the newest pin".
MAX_CUTOFF_EXCEPTIONS_ROUNDS = 30
# Rounds of one resolution's exceptions (unbuildable releases, releases refusing the interpreter).
MAX_RESOLVE_ROUNDS = 6
# run_host(argv, log, what, cwd): run a uv command on the host, log it, raise StepFailed on failure.
RunHost = Callable[[list[str], BuildLog, str, "Path | None"], None]


class DatedPackages:
    def __init__(self, uv: str, run_host: RunHost) -> None:
        self.uv = uv
        self.run_host = run_host

    def resolve(self, python: Path | str, cutoff: str, per_package: Mapping[str, str], requirements: list[str],
                log: BuildLog, what: str) -> str | None:
        """uv's resolution of `requirements` as of `cutoff`, as `name==version` lines (None: none).
        A dated release that cannot be built for its metadata is taken as its first wheel for the
        interpreter, as installs do (shapely 1.7.1 on Python 3.9 for pvlib 0.8); one whose
        requires-python refuses the interpreter (uv ignores upper bounds, pip does not) as the first
        release after the date that admits it (numba 0.52 `<3.9` on Python 3.9 for pvlib 0.7)."""
        per_package = dict(per_package)
        wheels: list[str] = []
        lifted: dict[str, str] = {}  # refused releases' names -> the date they are taken as of
        interpreter = python_version(str(python))
        with tempfile.TemporaryDirectory(prefix="issuebench-dated-") as tmp:
            request = Path(tmp) / "requirements.in"
            request.write_text("\n".join(requirements) + "\n")
            out = Path(tmp) / "resolved.txt"
            for _ in range(MAX_RESOLVE_ROUNDS):
                argv = compile_command(self.uv, Path(python), cutoff, per_package, request, out)
                try:
                    self.run_host([*argv, *(a for n in wheels for a in ("--only-binary", n))], log, what, None)
                except StepFailed as exc:
                    unbuildable = [n for n in failed_builds(exc.output) if n not in wheels]
                    hidden = [n for n in filtered_by_cutoff(exc.output) if n not in per_package]
                    if unbuildable:
                        wheels += unbuildable
                        for name in unbuildable:
                            per_package[name] = first_wheel_date(name, str(python), cutoff) or NO_CUTOFF
                        log.note(f"# cutoff: {', '.join(unbuildable)} resolved as the first wheel for this "
                                 "interpreter (the release of the date cannot be built for its metadata)")
                    elif hidden and lifted:
                        # What the later release needs (numba 0.53's llvmlite 0.36) is as late as it.
                        when = max(lifted.values())
                        per_package.update(dict.fromkeys(hidden, when))
                        log.note(f"# cutoff: {', '.join(hidden)} taken as of {when[:10]}, as the releases "
                                 "taken later for this interpreter need")
                    else:
                        return None
                    continue
                resolved = out.read_text()
                refusing = [n for n in refused(exact_pins(resolved.splitlines()), interpreter)
                            if n not in per_package] if interpreter else []
                if not refusing:
                    return resolved
                for name in refusing:
                    first = first_admitting(name, str(interpreter), cutoff)
                    if first is None:
                        return resolved  # no later release admits it either: the install will say so
                    # A floor as well as a date: uv would rather go back to the refused release
                    # than take what the later one needs (numba 0.53's llvmlite 0.36) past the date.
                    requirements = [*requirements, f"{name}>={first[0]}"]
                    request.write_text("\n".join(requirements) + "\n")
                    per_package[name] = lifted[name] = first[1][:10] + "T23:59:59Z"
                log.note(f"# cutoff: {', '.join(f'{n} taken as of {lifted[n][:10]}' for n in refusing)}: the "
                         f"release of the date refuses Python {interpreter} (its requires-python), the first "
                         "later one admits it")
        return None

    def conda_era(self, spec: EnvSpec, log: BuildLog) -> EnvSpec:
        """The spec to install its requirement files with. A conda environment file lists packages
        unpinned, and the reference's conda installed them when its images were built, beside
        recipe pins years newer than the task (xarray 0.12: pandas 1.5.3 and numpy 1.23 of 2022-23
        with a 2020 task). The era of such files is the pins' era: resolved as of the task's date,
        pydap 3.2.2 of 2017 fails to import on the recipe's Python 3.10 and pandas 1.5 refuses the
        sparse and numbagg of 2021."""
        if not spec.exclude_newer or not spec.has_conda_files():
            return spec
        when = newest_pin_date(exact_pins(spec.packages), spec.exclude_newer)
        if when is None:
            return spec
        log.note(f"# cutoff: the conda environment file's packages taken as of {when[:10]}, the recipe's newest "
                 f"exact pin, instead of {spec.exclude_newer[:10]}: conda installed them beside those pins")
        return spec.model_copy(update={"exclude_newer": when})

    def install(self, argv: list[str], spec: EnvSpec, pins: list[tuple[str, str]], log: BuildLog,
                what: str, cwd: Path) -> None:
        """Install with the cutoff; exact pins exempt; dependencies that only pins published after
        the cutoff need are taken as of the newest such pin, as the resolver names them.
        `argv` is `uv pip install --python PYTHON ...`."""
        python = argv[4]
        cutoff = spec.exclude_newer
        per_package = {**exempt_from_cutoff(spec), **dict.fromkeys((n for n, _ in pins), NO_CUTOFF)}
        binary_only: list[str] = []
        dated_builds: list[str] = []
        pins_date: str | None = None
        for _ in range(MAX_CUTOFF_EXCEPTIONS_ROUNDS):
            try:
                wheels = [a for n in binary_only for a in ("--only-binary", n)]
                self.run_host([*argv[:3], *date_args(cutoff, per_package), *dated_builds, *wheels, *argv[3:]],
                              log, what, cwd)
                log.cutoff_exceptions.update({n: d for n, d in per_package.items() if d != NO_CUTOFF})
                return
            except StepFailed as exc:
                absent = not_on_index(exc.output) or unsatisfiable_requirements(exc.output)
                if absent and drop_from_conda_files(argv, absent):
                    # conda environment files name conda-only packages (cdms2): not on the index.
                    log.note(f"# substituted: {', '.join(absent)} from a conda environment file left out: "
                             "the package index has no release of it that installs here")
                    continue
                yanked = only_yanked(exc.output)
                if yanked and yanked not in argv:
                    # Every release was withdrawn since (types-pkg_resources): an exact pin may
                    # still take a yanked release, as the packaging standards allow.
                    argv = [*argv, yanked]
                    log.note(f"# substituted: {yanked} pinned exactly: every release the date allows is yanked")
                    continue
                unbuildable = failed_builds(exc.output)
                tools = legacy_build_constraints(Path(python).parent.parent) \
                    if unbuildable and not dated_builds else None
                if tools is not None:
                    # An exact pin of setuptools lifts the date for it everywhere, builds included:
                    # markupsafe 1.0's setup.py imports `Feature`, gone from setuptools since 2020.
                    # Builds first get the env's own build tools, which are the era's.
                    dated_builds = ["--build-constraint", str(tools)]
                    log.note(f"# builds: {', '.join(unbuildable)} built with the environment's own build tools "
                             f"({tools.read_text().strip().replace(chr(10), ', ')}): today's cannot build it")
                    continue
                if cutoff and unbuildable and not set(unbuildable) & set(binary_only):
                    # The era's release has no wheel for this interpreter and no longer builds
                    # (bottleneck 1.3.2 wants numpy 1.17 built from source on Python 3.10): take
                    # the first release that ships a wheel for it, as near the date as that allows.
                    binary_only += unbuildable
                    for name in unbuildable:
                        per_package[name] = first_wheel_date(name, python, cutoff) or NO_CUTOFF
                    log.note(f"# cutoff: {', '.join(unbuildable)} taken as the first wheel for this interpreter "
                             f"({', '.join(per_package[n][:10] for n in unbuildable)}): the release of the date "
                             "cannot be built here")
                    continue
                hidden = [n for n in filtered_by_cutoff(exc.output) if n not in per_package]
                if not cutoff or not hidden:
                    raise
                if pins_date is None:
                    pins_date = newest_pin_date([*pins, *exact_pins(spec.packages)], cutoff)
                    if pins_date is None:
                        raise  # no pin postdates the date: the date itself is what the resolver refuses
                    # Everything the pins need, as of their time, in one resolution; the loop then
                    # handles whatever else the resolver still names.
                    hidden += [n for n in self.pin_closure(python, pins, pins_date, log)
                               if n not in per_package and n not in hidden]
                for name in hidden:
                    per_package[name] = pins_date
                log.note(f"# cutoff: {', '.join(hidden)} taken as of {pins_date[:10]}, the newest exact pin's "
                         f"publication (pins win over the date {cutoff[:10]}, and they need these)")
        raise StepFailed(f"{what}: the resolver kept asking for packages the date hides")

    def pin_closure(self, python: str, pins: list[tuple[str, str]], when: str, log: BuildLog) -> list[str]:
        """Names of the packages the exact pins need, resolved together as of `when` (best effort)."""
        resolved = self.resolve(python, when, {}, [f"{n}=={v}" for n, v in pins], log,
                                f"resolving the pins alone as of {when[:10]}")
        if resolved is None:
            return []
        return [line.split("==")[0].strip() for line in resolved.splitlines() if "==" in line]


def first_wheel_date(name: str, python: str, cutoff: str) -> str | None:
    """The end of the day the first wheel of `name` for the interpreter was published."""

    version = python_version(python)
    tag = "cp" + "".join(version.split(".")[:2]) if version else None
    when = first_wheel_after(name, tag, cutoff) if tag else None
    return when[:10] + "T23:59:59Z" if when else None


def python_version(python: str) -> str | None:
    """The full version (3.9.18) of an interpreter, or None when it does not run."""
    proc = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=False)
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None

