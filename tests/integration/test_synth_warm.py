"""synth's warm worker against plain sandboxed runs, on a tiny project built here (real git, uv
environment, bubblewrap).

The warm worker must give the same verdict, FAIL_TO_PASS and PASS_TO_PASS as a plain pytest
run per candidate, never run stale bytecode of an earlier candidate (a same-size bug written in
the same second as the last one), and survive candidates that hang or kill their process.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from tests.gitrepo import init_repo
from tests.integration.test_synth_real_sandbox import CORE  # the same small project

pytestmark = pytest.mark.slow

TESTS = '''import pytest

from calc.core import add, clamp


def test_add():
    assert add(2, 3) == 5


def test_add_zero():
    assert add(0, 0) == 0


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(2, 0, 3) == 2


@pytest.mark.parametrize("label", ["two and three"])
def test_add_labelled(label):
    assert add(2, 3) == 5
'''
ADD = ("tests/test_core.py::test_add", "tests/test_core.py::test_add_zero")
CLAMP = "tests/test_core.py::test_clamp"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    from issuebench.envs import EnvBuilder
    from issuebench.sandbox import get_sandbox
    from issuebench.synth.run import load_recipe
    from issuebench.synth.workbench import Workbench

    tmp = tmp_path_factory.mktemp("warm")
    src = tmp / "calc"
    commit = init_repo(src, {"calc/__init__.py": "", "calc/core.py": CORE, "tests/test_core.py": TESTS},
                       date="2024-01-02T00:00:00Z")
    recipe = tmp / "recipe.toml"
    recipe.write_text(f'python = "{sys.version_info.major}.{sys.version_info.minor}"\n'
                      'packages = ["pytest"]\nexclude_newer_source = "none"\n'
                      'test_cmd = "python -m pytest -rA"\n')
    spec, _args = load_recipe(recipe)
    sandbox = get_sandbox()
    wb = Workbench(src, commit, spec, builder=EnvBuilder(sandbox=sandbox), sandbox=sandbox)
    yield wb
    wb.close()


def candidate(add_body: str):
    from issuebench.synth.base import Candidate, Change

    after = CORE.replace("return a + b", add_body)
    return Candidate("test", [Change("calc/core.py", CORE, after)], [("calc/core.py", "add", 2, 2)])


def both_ways(bench, cand, timeout: float = 60.0):
    from issuebench.synth.coverage_map import CoverageMap
    from issuebench.synth.issue_text import write_issue
    from issuebench.synth.validate import Baseline, check

    cmap = CoverageMap({"calc/core.py": {2: set(ADD), 6: {CLAMP}}})
    base = Baseline({*ADD, CLAMP}, suite_seconds=1.0)
    out, texts = {}, {}
    for warm in (True, False):
        # The warm way against validation as it was before it: a plain run per pytest call,
        # tracebacks printed in both runs.
        bench.warm = warm
        res = check(bench, cand, cmap, base, timeout=timeout, fast=warm)
        out[warm] = (res.status, res.FAIL_TO_PASS, res.PASS_TO_PASS)
        texts[warm] = write_issue(res.FAIL_TO_PASS, res.output, {"calc/core.py"}) if res.FAIL_TO_PASS else ""
    bench.warm = True
    assert texts[True] == texts[False]
    return out[True], out[False], texts[True]


def test_warm_and_plain_runs_give_identical_results_and_never_stale_bytecode(bench, monkeypatch) -> None:
    from issuebench.config import TESTBED_PATH
    from issuebench.sandbox import Limits
    from issuebench.synth import validate

    minus = candidate("return a - b")           # same size as the original line: caught by test_add
    for few in (4, 0):  # the confirming run prints the tracebacks / the quoted test runs alone
        monkeypatch.setattr(validate, "QUOTE_IN_CONFIRMING", few)
        warm, plain, text = both_ways(bench, minus)
        assert "assert -1 == 5" in text and "Trimmed traceback" in text  # the traceback the issue quotes
    monkeypatch.undo()
    assert warm == plain == ("kept", ["tests/test_core.py::test_add"], ["tests/test_core.py::test_add_zero", CLAMP])
    assert bench.warm_starts == 2 and not bench.warm_disabled  # two workers, taking turns

    # Bytecode of the caught bug, as an earlier run that wrote .pyc files would leave it. Each
    # later write of core.py gets its mtime: with the same size, the .pyc looks valid.
    bench.apply(minus.changes)
    core = bench.ws / "calc" / "core.py"
    made = bench.sandbox.run(["python", "-c", "import py_compile; py_compile.compile('calc/core.py')"],
                             workspace=bench.ws, binds=bench.env.binds(), env=bench.env.run_env(),
                             limits=Limits(timeout=60), network=False, cwd=TESTBED_PATH)
    assert made.ok, made.output
    [pyc] = (core.parent / "__pycache__").glob("core.*.pyc")
    stale, stamp = pyc.read_bytes(), core.stat().st_mtime_ns
    bench.apply(minus.changes, undo=True)
    swapped = candidate("return b + a")          # same size, equivalent: nothing may fail
    assert len(swapped.changes[0].after) == len(minus.changes[0].after)
    real_apply = bench.apply

    def apply_same_second(changes, *, undo: bool = False) -> None:
        if not undo:
            pyc.write_bytes(stale)
        real_apply(changes, undo=undo)
        if not undo:
            os.utime(core, ns=(stamp, stamp))

    bench.apply = apply_same_second
    try:
        warm, plain, _text = both_ways(bench, swapped)
    finally:
        del bench.apply
    assert warm == plain
    assert warm[0] == "nothing_fails"
    # PASS_TO_PASS holds the covering test that still passes and the same file's other tests.
    warm, plain, _text = both_ways(bench, candidate("return a * b"))
    assert warm == plain == ("kept", ["tests/test_core.py::test_add"], ["tests/test_core.py::test_add_zero", CLAMP])


def test_a_hanging_or_dying_candidate_is_handled_and_the_worker_replaced(bench) -> None:
    from issuebench.synth.validate import TIMEOUT

    bench.warm = True
    starts = bench.warm_starts
    warm, plain, _text = both_ways(bench, candidate("while True:\n        pass"), timeout=3.0)
    assert warm[0] == plain[0] == TIMEOUT
    # The worker hung with the run and was killed; the next run starts a fresh one.
    dies = candidate("import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)")
    warm, plain, _text = both_ways(bench, dies)
    # The run dies inside test_add: what its cut output says, the plain run says too.
    assert warm == plain and set(warm[1]) <= set(ADD)
    kills_parent = candidate("import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n    return a + b + 1")
    warm, plain, _text = both_ways(bench, kills_parent)
    assert warm == plain == ("kept", list(ADD), [CLAMP])
    # The hung worker and the ones killed from inside were replaced: runs go on, warm.
    assert bench.warm_starts >= starts + 1 and not bench.warm_disabled
    warm, plain, _text = both_ways(bench, candidate("return a - b"))
    assert warm == plain and warm[0] == "kept"


def test_a_bugs_first_and_confirming_runs_get_different_hash_seeds(bench) -> None:
    """Plain runs each draw a hash seed; a test failing under some set orders must not be confirmed
    by a second run that shares the first one's seed."""
    from issuebench.synth.coverage_map import CoverageMap
    from issuebench.synth.validate import Baseline, check

    seeds = bench.ws / "seeds.txt"
    seeds.unlink(missing_ok=True)
    cand = candidate('open("seeds.txt", "a").write(str(hash("abc")) + "\\n")\n    return a - b')
    bench.warm = True
    res = check(bench, cand, CoverageMap({"calc/core.py": {2: set(ADD)}}), Baseline({*ADD, CLAMP}, 1.0), timeout=60)
    assert res.status == "kept"
    # test_add and test_add_zero in the first run, test_add in the confirming one.
    first_a, first_b, confirming = seeds.read_text().split()
    seeds.unlink()
    assert first_a == first_b and confirming != first_a


def test_a_cut_parametrized_id_runs_its_test_not_nothing(bench) -> None:
    """`-rA` ids are cut at a space (`test_add_labelled[two`); given as is, pytest runs nothing
    and every covering test looked failed: a task kept with no bug behind it."""
    from issuebench.synth.coverage_map import CoverageMap
    from issuebench.synth.validate import Baseline, check

    cut = "tests/test_core.py::test_add_labelled[two"
    cmap, base = CoverageMap({"calc/core.py": {2: {cut}}}), Baseline({cut}, 1.0)
    assert check(bench, candidate("return b + a"), cmap, base, timeout=60).status == "nothing_fails"
    res = check(bench, candidate("return a - b"), cmap, base, timeout=60)
    assert (res.status, res.FAIL_TO_PASS) == ("kept", [cut])
