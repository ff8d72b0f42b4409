"""`uv pip install` as of a date, with the exceptions the date has to allow.

The rule is in dating.py: every package as of the task's date, exact pins exempt. Installing by it
meets cases the resolver reports one at a time, each answered by a general rule and said in the
manifest's decisions: conda-only entries left out, yanked-only requirements pinned, old sdists built
with the era's build tools or else taken as their first wheel for the interpreter, the
dependencies only newer pins need taken as of the newest pin's publication, and placeholder
releases (9999.x) passed over.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name

from issuebench.envs.build_log import BuildLog, StepFailed
from issuebench.envs.build_tools import legacy_build_constraints
from issuebench.envs.dated_install import compile_command
from issuebench.envs.dating import (
    NO_CUTOFF,
    PLACEHOLDER_MAJOR,
    below_placeholder,
    date_args,
    exempt_from_cutoff,
    failed_builds,
    filtered_by_cutoff,
    newest_pin_date,
    not_on_index,
    only_yanked,
    placeholder_releases,
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
        release after the date that admits it (numba 0.52 `<3.9` on Python 3.9 for pvlib 0.7).

        Each round: resolve -> on failure, the exception the resolver's complaint allows (or none)
        -> on success, the releases that refuse the interpreter lifted (or the resolution)."""
        interpreter = python_version(str(python))
        with tempfile.TemporaryDirectory(prefix="issuebench-dated-") as tmp:
            res = _Resolution(Path(tmp), dict(per_package))
            res.ask(requirements)
            for _ in range(MAX_RESOLVE_ROUNDS):
                argv = compile_command(self.uv, Path(python), cutoff, res.per_package, res.request, res.out)
                try:
                    self.run_host([*argv, *(a for n in res.wheels for a in ("--only-binary", n))], log, what, None)
                except StepFailed as exc:
                    if not _allow_in_resolution(res, exc.output, str(python), cutoff, log):
                        return None
                    continue
                resolved = res.out.read_text()
                placeholders = [n for n in placeholder_releases(exact_pins(resolved.splitlines()))
                                if below_placeholder(n) not in res.requirements]
                if placeholders:
                    res.ask([*res.requirements, *map(below_placeholder, placeholders)])
                    log.note(_placeholder_note(placeholders))
                    continue
                refusing = [n for n in refused(exact_pins(resolved.splitlines()), interpreter)
                            if n not in res.per_package] if interpreter else []
                if not refusing or not _lift_refused(res, refusing, interpreter or "", cutoff, log):
                    return resolved
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
        `argv` is `uv pip install --python PYTHON ...`.

        Each failed round takes the first exception the resolver's complaint allows, in this order:
        conda-only entries left out, a yanked-only requirement pinned, the era's build tools, the
        first wheel for the interpreter, what the pins need as of the newest pin; none: it fails."""
        state = _Install(argv, argv[4], spec.exclude_newer,
                         {**exempt_from_cutoff(spec), **dict.fromkeys((n for n, _ in pins), NO_CUTOFF)})
        for _ in range(MAX_CUTOFF_EXCEPTIONS_ROUNDS):
            try:
                self.run_host(state.command(), log, what, cwd)
            except StepFailed as exc:
                if not (any(rule(state, exc.output, log) for rule in _INSTALL_EXCEPTIONS)
                        or self._as_of_pins(state, exc.output, spec, pins, log)):
                    raise
                continue
            if _keep_below_placeholders(state, installed_releases(state.python), log):
                continue
            log.cutoff_exceptions.update({n: d for n, d in state.per_package.items() if d != NO_CUTOFF})
            return
        raise StepFailed(f"{what}: the resolver kept asking for packages the date hides")

    def _as_of_pins(self, state: _Install, output: str, spec: EnvSpec, pins: list[tuple[str, str]],
                    log: BuildLog) -> bool:
        """Dependencies the date hides that the pins need: as of the newest pin's publication."""
        cutoff = state.cutoff
        hidden = [n for n in filtered_by_cutoff(output) if n not in state.per_package]
        if not cutoff or not hidden:
            return False
        if state.pins_date is None:
            state.pins_date = newest_pin_date([*pins, *exact_pins(spec.packages)], cutoff)
            if state.pins_date is None:
                return False  # no pin postdates the date: the date itself is what the resolver refuses
            # Everything the pins need, as of their time, in one resolution; the loop then
            # handles whatever else the resolver still names.
            hidden += [n for n in self.pin_closure(state.python, pins, state.pins_date, log)
                       if n not in state.per_package and n not in hidden]
        for name in hidden:
            state.per_package[name] = state.pins_date
        log.note(f"# cutoff: {', '.join(hidden)} taken as of {state.pins_date[:10]}, the newest exact pin's "
                 f"publication (pins win over the date {cutoff[:10]}, and they need these)")
        return True

    def pin_closure(self, python: str, pins: list[tuple[str, str]], when: str, log: BuildLog) -> list[str]:
        """Names of the packages the exact pins need, resolved together as of `when` (best effort)."""
        resolved = self.resolve(python, when, {}, [f"{n}=={v}" for n, v in pins], log,
                                f"resolving the pins alone as of {when[:10]}")
        if resolved is None:
            return []
        return [line.split("==")[0].strip() for line in resolved.splitlines() if "==" in line]


@dataclass
class _Resolution:
    """One resolution's exceptions to the date so far."""

    folder: Path
    per_package: dict[str, str]
    wheels: list[str] = field(default_factory=list)      # names taken as their first wheel
    lifted: dict[str, str] = field(default_factory=dict)  # refused releases' names -> the date they are taken as of
    requirements: list[str] = field(default_factory=list)

    @property
    def request(self) -> Path:
        return self.folder / "requirements.in"

    @property
    def out(self) -> Path:
        return self.folder / "resolved.txt"

    def ask(self, requirements: list[str]) -> None:
        self.requirements = requirements
        self.request.write_text("\n".join(requirements) + "\n")


def _allow_in_resolution(res: _Resolution, output: str, python: str, cutoff: str, log: BuildLog) -> bool:
    """The exception a failed resolution allows: unbuildable releases as their first wheel, or
    what releases lifted for the interpreter need, as late as they are. False: none."""
    unbuildable = [n for n in failed_builds(output) if n not in res.wheels]
    hidden = [n for n in filtered_by_cutoff(output) if n not in res.per_package]
    if unbuildable:
        res.wheels += unbuildable
        for name in unbuildable:
            res.per_package[name] = first_wheel_date(name, python, cutoff) or NO_CUTOFF
        log.note(f"# cutoff: {', '.join(unbuildable)} resolved as the first wheel for this "
                 "interpreter (the release of the date cannot be built for its metadata)")
        return True
    if hidden and res.lifted:
        # What the later release needs (numba 0.53's llvmlite 0.36) is as late as it.
        when = max(res.lifted.values())
        res.per_package.update(dict.fromkeys(hidden, when))
        log.note(f"# cutoff: {', '.join(hidden)} taken as of {when[:10]}, as the releases "
                 "taken later for this interpreter need")
        return True
    return False


def _lift_refused(res: _Resolution, refusing: list[str], interpreter: str, cutoff: str, log: BuildLog) -> bool:
    """Each release that refuses the interpreter as the first later one that admits it. False
    when one has none (the install will say so)."""
    for name in refusing:
        first = first_admitting(name, interpreter, cutoff)
        if first is None:
            return False
        # A floor as well as a date: uv would rather go back to the refused release
        # than take what the later one needs (numba 0.53's llvmlite 0.36) past the date.
        res.ask([*res.requirements, f"{name}>={first[0]}"])
        res.per_package[name] = res.lifted[name] = first[1][:10] + "T23:59:59Z"
    log.note(f"# cutoff: {', '.join(f'{n} taken as of {res.lifted[n][:10]}' for n in refusing)}: the "
             f"release of the date refuses Python {interpreter} (its requires-python), the first "
             "later one admits it")
    return True


@dataclass
class _Install:
    """One install's exceptions to the date so far."""

    argv: list[str]                 # uv pip install --python PYTHON ...
    python: str
    cutoff: str | None
    per_package: dict[str, str]
    binary_only: list[str] = field(default_factory=list)
    dated_builds: list[str] = field(default_factory=list)
    pins_date: str | None = None

    def command(self) -> list[str]:
        wheels = [a for n in self.binary_only for a in ("--only-binary", n)]
        return [*self.argv[:3], *date_args(self.cutoff, self.per_package), *self.dated_builds, *wheels,
                *self.argv[3:]]


def _leave_out_conda_only(state: _Install, output: str, log: BuildLog) -> bool:
    absent = not_on_index(output) or unsatisfiable_requirements(output)
    if not (absent and drop_from_conda_files(state.argv, absent)):
        return False
    # conda environment files name conda-only packages (cdms2): not on the index.
    log.note(f"# substituted: {', '.join(absent)}{_LEFT_OUT_TAIL}")
    return True


_LEFT_OUT_TAIL = (" from a conda environment file left out: the package index has no release of it that "
                  "installs here")


def left_out_packages(decisions: list[str]) -> list[str]:
    """The packages an environment's build left out (its manifest's `decisions`), as the note above
    names them: a test that needs one cannot run in it, whatever a patch does."""
    names: list[str] = []
    for decision in decisions:
        head, sep, _ = decision.partition(_LEFT_OUT_TAIL)
        if sep and head.startswith("substituted: "):
            names += [n.strip() for n in head.removeprefix("substituted: ").split(",") if n.strip()]
    return names


def _pin_yanked(state: _Install, output: str, log: BuildLog) -> bool:
    yanked = only_yanked(output)
    if not yanked or yanked in state.argv:
        return False
    # Every release was withdrawn since (types-pkg_resources): an exact pin may
    # still take a yanked release, as the packaging standards allow.
    state.argv = [*state.argv, yanked]
    log.note(f"# substituted: {yanked} pinned exactly: every release the date allows is yanked")
    return True


def _era_build_tools(state: _Install, output: str, log: BuildLog) -> bool:
    unbuildable = failed_builds(output)
    tools = legacy_build_constraints(Path(state.python).parent.parent) \
        if unbuildable and not state.dated_builds else None
    if tools is None:
        return False
    # An exact pin of setuptools lifts the date for it everywhere, builds included:
    # markupsafe 1.0's setup.py imports `Feature`, gone from setuptools since 2020.
    # Builds first get the env's own build tools, which are the era's.
    state.dated_builds = ["--build-constraint", str(tools)]
    log.note(f"# builds: {', '.join(unbuildable)} built with the environment's own build tools "
             f"({tools.read_text().strip().replace(chr(10), ', ')}): today's cannot build it")
    return True


def _first_wheels(state: _Install, output: str, log: BuildLog) -> bool:
    unbuildable = failed_builds(output)
    if not (state.cutoff and unbuildable and not set(unbuildable) & set(state.binary_only)):
        return False
    # The era's release has no wheel for this interpreter and no longer builds
    # (bottleneck 1.3.2 wants numpy 1.17 built from source on Python 3.10): take
    # the first release that ships a wheel for it, as near the date as that allows.
    state.binary_only += unbuildable
    for name in unbuildable:
        state.per_package[name] = first_wheel_date(name, state.python, state.cutoff) or NO_CUTOFF
    log.note(f"# cutoff: {', '.join(unbuildable)} taken as the first wheel for this interpreter "
             f"({', '.join(state.per_package[n][:10] for n in unbuildable)}): the release of the date "
             "cannot be built here")
    return True


def _keep_below_placeholders(state: _Install, installed: list[tuple[str, str]], log: BuildLog) -> bool:
    """A placeholder release the install took (no failure says so: it installs, then fails on
    import) is replaced by the release below it; exact pins stay as they are."""
    placeholders = [n for n in placeholder_releases(installed)
                    if below_placeholder(n) not in state.argv and state.per_package.get(n) != NO_CUTOFF]
    if not placeholders:
        return False
    state.argv = [*state.argv, *map(below_placeholder, placeholders)]
    log.note(_placeholder_note(placeholders))
    return True


def _placeholder_note(names: list[str]) -> str:
    return (f"# substituted: {', '.join(names)} kept below {PLACEHOLDER_MAJOR}: a release numbered so is a "
            "placeholder a moved project leaves, not the era's release")


def installed_releases(python: str) -> list[tuple[str, str]]:
    """(name, version) of every distribution installed in the environment of `python`."""
    found = []
    for info in Path(python).parent.parent.glob("lib/python*/site-packages/*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        found.append((canonicalize_name(name), version))
    return found


# What a failed install round may allow, in the order they are tried (the pins' rule, which needs
# a resolution of its own, comes last: DatedPackages._as_of_pins).
_INSTALL_EXCEPTIONS: tuple[Callable[[_Install, str, BuildLog], bool], ...] = (
    _leave_out_conda_only, _pin_yanked, _era_build_tools, _first_wheels)


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

