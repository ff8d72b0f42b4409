"""A run's files are written as any output file is: readable by whoever may read the folder, as
the umask says (0644 under the usual 022), the atomically written ones like the logs."""

from __future__ import annotations

import os
import stat

import pytest

from issuebench.datasets import gold_predictions
from issuebench.demo import demo_repos_dir, demo_tasks
from issuebench.harness import EvalOptions, build_context, run_evaluation

pytestmark = pytest.mark.xdist_group("demo-eval")

ARTIFACTS = {"patch.diff", "eval.sh", "test_output.txt", "run_instance.log", "report.json", "result.json"}


@pytest.fixture
def umask():
    """Set the process's umask for the test, then put the previous one back."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


def _modes(folder) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640)])
def test_a_runs_artifacts_get_the_mode_the_umask_gives(tmp_path, umask, mask, expected):
    umask(mask)
    tasks = demo_tasks()[:1]
    ctx = build_context(EvalOptions(output_dir=tmp_path, run_id="modes", repos_dir=demo_repos_dir(), timeout=120,
                                    use_cache=False))
    (report,) = run_evaluation(tasks, gold_predictions(tasks), ctx).reports
    instance = ctx.layout.instance_dir("gold", tasks[0].instance_id)
    modes = _modes(instance)
    assert set(modes) >= ARTIFACTS, sorted(modes)
    assert modes == dict.fromkeys(modes, expected), {n: oct(m) for n, m in modes.items()}
    summary = ctx.layout.summary_path("gold")
    assert stat.S_IMODE(summary.stat().st_mode) == expected
    assert report.status.value == "resolved", report.reason
