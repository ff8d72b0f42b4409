"""benchmarks/synth_yield.py: the covering-test speed-up compares two sides on the same worker."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from issuebench.synth.base import Candidate, Change
from issuebench.synth.validate import Baseline, covering_tests

ROOT = Path(__file__).parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("synth_yield", ROOT / "benchmarks" / "synth_yield.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["synth_yield"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_each_covering_speed_up_compares_ways_on_the_same_worker() -> None:
    mod = _module()
    speed_ups = [(num, den) for label, num, den in mod.RATIOS if label.startswith("covering-test speed-up")]
    assert len(speed_ups) == 2
    for num, den in speed_ups:
        assert num.warm == den.warm and num.fast == den.fast
        assert num.whole_suite and not den.whole_suite
    # Cold against cold is there when plain runs are asked for.
    assert {w.name for w in mod.ways(cold=True, suite_before=False)} >= {"suite_plain", "covering_plain"}
    assert all(w.warm for w in mod.ways(cold=False, suite_before=False))


def test_the_whole_suite_on_the_warm_worker_is_every_passing_test_by_id() -> None:
    """Given by id (not None, which means the suite command), so the warm worker can run it."""
    mod = _module()
    cand = Candidate(generator="op_flip", changes=[Change("pkg/a.py", "x = 1\n", "x = 2\n")],
                     functions=[("pkg/a.py", "f", 3, 5)])
    base = Baseline(passed={"tests/test_a.py::t1", "tests/test_b.py::t2"}, suite_seconds=1.0)
    assert covering_tests(cand, mod.WholeSuite(), base) == ["tests/test_a.py::t1", "tests/test_b.py::t2"]


def test_ratios_are_given_only_for_ways_both_timed() -> None:
    mod = _module()
    got = mod.ratios({"covering_warm": 10.0, "suite_warm": 25.0, "suite_plain": 80.0})
    assert got == {"covering-test speed-up, warm worker on both sides": 2.5,
                   "warm worker's gain on the whole suite": 3.2,
                   "mixed: whole suite on plain runs over covering tests on the warm worker (both effects)": 8.0}


def test_totals_can_leave_out_the_candidates_any_way_timed_out_on() -> None:
    mod = _module()
    rows = [{"covering_warm": "kept", "covering_warm_seconds": 1.0, "suite_warm": "kept", "suite_warm_seconds": 3.0},
            {"covering_warm": "timeout", "covering_warm_seconds": 30.0, "suite_warm": "timeout",
             "suite_warm_seconds": 60.0}]
    names = ["covering_warm", "suite_warm"]
    assert mod.totals(rows, names) == {"covering_warm": 31.0, "suite_warm": 63.0}
    assert mod.totals(rows, names, skip_timeouts=True) == {"covering_warm": 1.0, "suite_warm": 3.0}
