"""`--setup-fallback` when the recipe's environment builds but the task's tests cannot run in it.

The rule (docs/setup.md, "When the tests cannot run"), cheapest first:

1. A run is suspect only when no test passed and its output shows a fault of the environment:
   the test command is not found (exit 127), a module cannot be found that neither the gold patch
   nor the test patch creates (so the task does not expect it to be missing), or a name cannot be
   imported from an installed package the patches do not touch (a file under site-packages: a
   dependency's wrong version).
   Healthy runs cost nothing.
2. The environment is blamed only on the unpatched base: a suspect run with a model patch is
   followed by one run of the same tests without it (the no-op baseline, remembered for the
   process). A patch that breaks imports leaves the baseline clean and gets no fallback.
3. Then the recipe `setup` finds for the task's version (issuebench.setup.fallback, remembered
   on disk) replaces the task's recipe and the run is repeated in its environment once; the
   result's notes say why and from which setup. Without such a recipe the run stands, with a note.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from issuebench.harness.recipe_fallback import recipe_or_reason
from issuebench.models import EnvSpec, InstanceStatus, Task, TestStatus, stable_hash
from issuebench.patch import parse_patch

NOTE = "setup fallback"  # issuebench.setup.fallback.NOTE: every note of the fallback starts so

_MISSING = re.compile(r"No module named '?([\w.]+)'?")
_FROM_INSTALLED = re.compile(r"cannot import name '?(\w+)'? from '?([\w.]+)'? \([^)\n]*site-packages")
_NOT_FOUND = re.compile(r"^(?:bash: )?(?:line \d+: )?(\S+): command not found$", re.M)

# (base commit, test patch, recipe) -> the baseline's fault or None: one baseline per process.
_baselines: dict[str, str | None] = {}
_lock = threading.Lock()


def patched_modules(task: Task, *, created_only: bool) -> list[list[str]]:
    """Dotted paths (as lists) of the .py files and folders the gold or test patch creates (or touches)."""

    paths = []
    for text in (task.patch, task.test_patch):
        for fp in parse_patch(text or ""):
            if fp.path_new and (fp.is_new or not created_only):
                parts = fp.path_new.removesuffix(".py").split("/")
                paths.append(parts[:-1] if parts[-1] == "__init__" else parts)
    return paths


def _named_by(name: str, paths: list[list[str]]) -> bool:
    want = name.split(".")
    return any(parts[i:i + len(want)] == want for parts in paths for i in range(len(parts)))


def env_fault(run: Any, task: Task) -> str | None:
    """What in the run says its environment cannot run the tests, or None (see the module's rule)."""
    if run.status not in (InstanceStatus.UNRESOLVED, InstanceStatus.LOG_UNPARSEABLE):
        return None
    if any(status is TestStatus.PASSED for status in run.status_map.values()):
        return None
    text = run.output or ""
    created = patched_modules(task, created_only=True)
    for match in _MISSING.finditer(text):
        if not _named_by(match.group(1), created):
            return f"No module named '{match.group(1)}'"
    # A project installed into site-packages (not editable) is still the project: its own names are not
    # the environment's fault, so a module whose files the patches touch is left out.
    touched = patched_modules(task, created_only=False)
    for match in _FROM_INSTALLED.finditer(text):
        if not _named_by(match.group(2), touched):
            return f"cannot import name '{match.group(1)}' from the installed {match.group(2)}"
    match = _NOT_FOUND.search(text)
    if match or run.returncode == 127:
        return f"{match.group(1) if match else 'the test command'}: command not found"
    return None


Once = Callable[..., Any]  # instance.run_tests


def when_tests_cannot_run(task: Task, model_patch: str | None, ctx: Any, run: Any, once: Once,
                          spec: EnvSpec | None, log: Any, *, apply_test_patch: bool = True) -> Any:
    """`run` (made by once(task, model_patch, ctx, spec=spec, ...)), or the same run repeated in the
    environment `setup` found for the task's version, when the module's rule says so."""
    if not getattr(ctx, "setup_fallback", False) or getattr(ctx, "backend", "local") == "docker":
        return run
    if spec is None or run.env_hash is None or any(n.startswith(NOTE) for n in run.notes):
        return run  # no env was built, or it is already setup's (the recipe failed to build)
    fault = env_fault(run, task)
    if fault is None:
        return run
    key = stable_hash({"base": task.base_commit, "tests": task.test_patch if apply_test_patch else "",
                       "spec": spec.content_hash()})
    if model_patch and model_patch.strip():
        with _lock:
            known, base_fault = key in _baselines, _baselines.get(key)
        if not known:
            log.info(f"tests could not run with the patch ({fault}): running them on the unpatched base")
            base = once(task, None, ctx, spec=spec, log=log, apply_test_patch=apply_test_patch)
            base_fault = env_fault(base, task) if base.env_hash is not None else None
            with _lock:
                _baselines[key] = base_fault
        if base_fault is None:
            log.info("the tests run on the unpatched base: the patch's fault, no setup fallback")
            return run
        fault = base_fault
    else:
        with _lock:
            _baselines[key] = fault
    why = f"the recipe's environment cannot run the tests at the base commit ({fault})"
    log.info(f"{NOTE}: {why}")
    other = _fallback(task, ctx, why)
    if isinstance(other, str) or other.model_copy(update={"notes": spec.notes}) == spec:
        run.notes.append(f"{NOTE}: {why}; " + (other if isinstance(other, str) else "setup found the same recipe"))
        return run
    again = once(task, model_patch, ctx, spec=other, log=log, apply_test_patch=apply_test_patch)
    again.notes.insert(0, f"{NOTE}: {why}")
    return again


def _fallback(task: Task, ctx: Any, why: str) -> EnvSpec | str:
    """The version's setup recipe, or a one-line reason there is none."""
    return recipe_or_reason(task, ctx, why)
