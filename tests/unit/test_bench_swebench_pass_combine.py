"""benchmarks/swebench_pass_combine.py: passes of one commit read as one pass over their union."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.test_bench_swebench_pass import _module

combine = _module("swebench_pass_combine")
STEPS = ("environments", "gold-cold", "noop-cold", "gold-warm", "noop-warm")


def _report(repo: str, n: int, gold: int, core: dict[str, float], *, commit: str = "a" * 40,
            warm: bool = True, noop_resolved=(), reasons=None) -> dict:
    steps = {s: {"core_seconds": core.get(s, 0.0), "instances": n if (warm or "warm" not in s) else 0,
                 "durations": {"sum_total_s": 11.0 * n, "sum_tests_s": 10.0 * n}} for s in STEPS}
    every = {"rows": 730, "at_hand": 318, "in_pass": n, "run": n, "gold_resolved": gold, "offline": n}
    misses = {"unresolved: FAIL_TO_PASS tests fail": list(reasons or {})}
    return {"meta": {"commit": commit, "clean": True}, "steps": steps, "repositories": {repo: {"in_pass": n}},
            "datasets": {"all (unique ids)": every},
            "per_instance_core_seconds": {"cold_pass": 1.0, "warm_pass": 1.0 if warm else 0.0},
            "disk": {"total": 2**30}, "misses": misses, "reasons": dict(reasons or {}),
            "noop_resolved": list(noop_resolved)}


def _write(tmp_path: Path, name: str, report: dict) -> Path:
    out = tmp_path / name
    out.mkdir()
    (out / "swebench-pass.json").write_text(json.dumps(report))
    return out


def test_core_seconds_per_instance_are_weighted_by_instances_not_averaged_per_pass(tmp_path, capsys) -> None:
    a = _write(tmp_path, "a", _report("o/a", 10, 10, {"environments": 100, "gold-cold": 100, "noop-cold": 100}))
    b = _write(tmp_path, "b", _report("o/b", 30, 29, {"environments": 300, "gold-cold": 0, "noop-cold": 0},
                                      reasons={"o__b-1": "1 of 1 FAIL_TO_PASS tests fail"}))
    assert combine.main([str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert "| all (unique ids) | 730 | 318 | 40 | 40 | 0 | 39/40 (97.5%) |" in text
    assert "cold 15.0 core-seconds" in text  # (300 + 300) / 40, where the passes' own figures are 30 and 10
    assert "- o__b-1: unresolved: FAIL_TO_PASS tests fail: 1 of 1 FAIL_TO_PASS tests fail" in text
    assert "2.00 GiB" in text and "(gold-warm): 1.1" in text


def test_warm_is_said_not_run_when_no_pass_ran_it_and_a_resolved_noop_is_a_miss(tmp_path, capsys) -> None:
    a = _write(tmp_path, "a", _report("o/a", 4, 4, {}, warm=False, noop_resolved=["o__a-2"]))
    assert combine.main([str(a)]) == 0
    text = capsys.readouterr().out
    assert "warm not run" in text and "- o__a-2: no-op resolved" in text and "(gold-cold)" in text


def test_passes_of_two_commits_or_of_one_repository_twice_are_refused(tmp_path, capsys) -> None:
    a = _write(tmp_path, "a", _report("o/a", 2, 2, {}))
    b = _write(tmp_path, "b", _report("o/b", 2, 2, {}, commit="b" * 40))
    c = _write(tmp_path, "c", _report("o/a", 2, 2, {}))
    assert combine.main([str(a), str(b)]) == 2
    assert "different commits: a at aaaaaaaaaaaa, b at bbbbbbbbbbbb" in capsys.readouterr().err
    assert combine.main([str(a), str(c)]) == 2
    assert "o/a is in two passes (a and c)" in capsys.readouterr().err
    assert combine.main([str(tmp_path / "none")]) == 2
    assert "cannot read a pass report" in capsys.readouterr().err
