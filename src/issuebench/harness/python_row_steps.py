"""A Python row's own steps between its test patch and its tests, honoured without the network.

A few reference eval_scripts of Python rows run something of the instance's own after applying the
test patch and before the test markers: `python -m pip install -q 'pytest<7.2'` (a suite whose
nose-style `setup` methods error under a newer pytest) or `export SETUPTOOLS_USE_DISTUTILS=stdlib`.
The recipe cannot say it (it is per instance, not per version), and an install in the test run
would need the network. So: an `export` becomes a run-time variable of the spec, an install's
requirements take the place of the recipe's entries of the same names (the environment is then
built with them, before any test runs), and anything else is left out with its reason in the notes.
"""

from __future__ import annotations

import re
import shlex

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from issuebench.harness.eval_script import START, test_patch_end
from issuebench.models import EnvSpec, Task

_EXPORT = re.compile(r"^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_PIP_INSTALL = re.compile(r"^(?:python[\d.]* -m )?pip install ")
# The reference's image activates its conda environment again before its steps: nothing to do here.
_ACTIVATE = re.compile(r"^(source /opt/miniconda3/bin/activate|conda activate \S+)\s*$")


def row_steps(eval_script: str | None) -> list[str]:
    """The lines after the test patch's heredoc and before the test markers (none without both)."""
    lines = (eval_script or "").splitlines()
    start = test_patch_end(lines)
    if start is None or not any(line.strip() == START for line in lines):
        return []
    steps = []
    for line in lines[start:]:
        stripped = line.strip()
        if stripped == START:
            break
        if stripped and not _ACTIVATE.match(stripped):
            steps.append(stripped)
    return steps


def with_python_row_steps(task: Task, spec: EnvSpec) -> EnvSpec:
    """`spec` with the row's own steps honoured (see the module's text); unchanged without any."""
    if spec.kind != "python" or spec.commands_from == "row":
        return spec
    steps = row_steps(task.eval_script)
    if not steps:
        return spec
    env_vars, packages, notes = dict(spec.env_vars), list(spec.packages), list(spec.notes)
    for step in steps:
        if export := _EXPORT.match(step):
            env_vars[export.group(1)] = " ".join(shlex.split(export.group(2)))
            notes.append(f"eval_script: `{step[:80]}` set for the test run")
        elif _PIP_INSTALL.match(step) and (wanted := _requirements(step)) is not None:
            names = {canonicalize_name(r.name) for r in wanted}
            packages = [p for p in packages if _name(p) not in names] + [str(r) for r in wanted]
            notes.append(f"eval_script: `{step[:80]}` installed with the environment (no network in a test run)")
        else:
            notes.append(f"eval_script: left out `{step[:80]}`: not an export or an install of named packages")
    return spec.model_copy(update={"env_vars": env_vars, "packages": packages, "notes": notes})


def _requirements(step: str) -> list[Requirement] | None:
    """The requirements a `pip install` names; None when it takes files, options with values or
    anything that is not a requirement."""
    try:
        words = shlex.split(step)
    except ValueError:
        return None
    args = words[words.index("install") + 1:]
    if any(a.startswith("-") and a not in ("-q", "--quiet", "-U", "--upgrade") for a in args):
        return None
    try:
        wanted = [Requirement(a) for a in args if not a.startswith("-")]
    except InvalidRequirement:
        return None
    return wanted or None


def _name(package: str) -> str | None:
    try:
        return canonicalize_name(Requirement(package.strip("'\"")).name)
    except InvalidRequirement:
        return None
