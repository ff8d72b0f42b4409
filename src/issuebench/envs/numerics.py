"""Tests run with numpy's AVX-512 kernels off, the floating-point results most machines give.

numpy 1.22 to 1.24 send float64 sin, cos and more to AVX-512 (SVML) kernels when the
CPU has them; those round differently in the last bits. Test suites are written on machines
without them and some compare exactly: pvlib's `aoi(30, 180, 30, 180)` is 0 there and 1.2e-6
degrees on an AVX-512 CPU, where the task's PASS_TO_PASS test then fails. numpy reads
NPY_DISABLE_CPU_FEATURES at import; it warns (an error under `-W error`) about names it does not
dispatch, so the list is asked of the environment's own numpy, once, in the sandbox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from issuebench.files import write_text_atomic
from issuebench.sandbox import Limits, RunStatus

VARIABLE = "NPY_DISABLE_CPU_FEATURES"
_CACHE_FILE = ".issuebench-numpy-avx512"
_TIMEOUT = 120

# Printed by the environment's python: the AVX-512 features its numpy dispatches to on this CPU.
_PROBE = """
import importlib
for name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
    try:
        m = importlib.import_module(name)
        break
    except Exception:
        m = None
if m is not None:
    on = getattr(m, "__cpu_features__", {})
    print(" ".join(f for f in getattr(m, "__cpu_dispatch__", ()) if f.startswith("AVX512") and on.get(f)))
"""


def avx512_features(env: Any, workspace: Path, sandbox: Any) -> str:
    """The features to turn off for `env`'s numpy ("" when it has none, or no numpy)."""

    cached = Path(env.path) / _CACHE_FILE
    try:
        return cached.read_text().strip()
    except OSError:
        pass
    # cwd outside the workspace: a checkout's own `numpy` folder is not the environment's numpy.
    result = sandbox.run(["python", "-c", _PROBE], workspace=workspace, binds=env.binds(), env=env.run_env(),
                         limits=Limits(timeout=_TIMEOUT, memory_mb=None, max_procs=None), network=False, cwd="/")
    if result.status != RunStatus.OK or result.returncode != 0:
        return ""  # not cached: a sandbox hiccup should not decide for every later run
    lines = [line for line in result.output.splitlines() if line.startswith("AVX512")]
    features = lines[-1].strip() if lines else ""
    write_text_atomic(cached, features + "\n")
    return features


def with_common_numerics(run_env: dict[str, str], env: Any, workspace: Path, sandbox: Any) -> tuple[dict[str, str], str]:
    """`run_env` with numpy's AVX-512 kernels off, and a line for the log ("" when unchanged).
    A recipe that sets the variable itself (even empty) keeps its own value."""
    if VARIABLE in run_env:
        return run_env, ""
    features = avx512_features(env, workspace, sandbox)
    if not features:
        return run_env, ""
    return {**run_env, VARIABLE: features}, (f"numpy's AVX-512 kernels off ({VARIABLE}={features}): the "
                                             "floating-point results of machines without them")
