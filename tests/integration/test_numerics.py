"""numpy's AVX-512 kernels are turned off for tests, with the feature names the environment's own
numpy dispatches: a real uv environment with numpy, asked in the real sandbox."""

from __future__ import annotations

import subprocess

import pytest

from issuebench.envs import EnvBuilder, find_python, numerics
from issuebench.models import EnvSpec
from tests.gitrepo import init_repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

# The expression behind pvlib's `aoi(30, 180, 30, 180)`: 0 degrees on most machines, 1.2e-6 with
# numpy's AVX-512 sin and cos (numpy 1.22 to 1.24; 1.25 went back to the common kernels).
AOI = ("import numpy as np; t = np.radians(30.0); "
       "p = np.cos(t) * np.cos(t) + np.sin(t) * np.sin(t) * np.cos(np.radians(180.0) - np.radians(180.0)); "
       "print(repr(float(np.degrees(np.arccos(p)))))")


@pytest.fixture(scope="module")
def numpy_env(tmp_path_factory):
    from issuebench.sandbox import get_sandbox

    try:
        sandbox = get_sandbox()
        python = find_python("3.11", "nearest")
    except Exception as exc:  # no bubblewrap or no interpreter here
        pytest.skip(f"no sandbox or interpreter: {exc}")
    repo = tmp_path_factory.mktemp("numerics-repo")
    init_repo(repo, {"README": "a project that uses numpy\n"})
    spec = EnvSpec(python=python.minor, packages=["numpy==1.23.5"], install=[], test_cmd="true")
    env = EnvBuilder(sandbox=sandbox).ensure(spec, repo)
    return env, repo, sandbox


def _host_features(env) -> str:
    """What the same numpy reports when run directly (the reference answer for the probe)."""
    proc = subprocess.run([str(env.python), "-c", numerics._PROBE], capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def test_the_features_are_the_environments_own_and_are_asked_once(numpy_env):
    env, ws, sandbox = numpy_env
    cached = env.path / numerics._CACHE_FILE
    cached.unlink(missing_ok=True)
    features = numerics.avx512_features(env, ws, sandbox)
    assert features == _host_features(env)
    assert all(f.startswith("AVX512") for f in features.split())
    assert cached.read_text().strip() == features  # the next instance of this env reads it


def test_tests_see_the_common_results_and_numpy_imports_without_a_warning(numpy_env):
    env, ws, sandbox = numpy_env
    run_env, note = numerics.with_common_numerics(env.run_env(), env, ws, sandbox)
    features = numerics.avx512_features(env, ws, sandbox)
    assert (numerics.VARIABLE in run_env) == bool(features) and (note != "") == bool(features)
    result = sandbox.run(["python", "-W", "error", "-c", AOI], workspace=ws, binds=env.binds(), env=run_env,
                         network=False)
    assert result.returncode == 0, result.output  # under -W error: no name numpy would not know
    assert result.output.strip().splitlines()[-1] == "0.0"


def test_a_recipe_that_sets_the_variable_keeps_its_value(numpy_env):
    env, ws, sandbox = numpy_env
    mine = {**env.run_env(), numerics.VARIABLE: ""}
    assert numerics.with_common_numerics(mine, env, ws, sandbox) == (mine, "")
