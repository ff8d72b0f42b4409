"""A real SWE-bench Lite task, end to end, without Docker.

The row is the real pallets__flask-4045 (read from the SWE-bench Lite file when it is present beside
the checkout, or where ISSUEBENCH_LITE_JSONL points; never copied into the project). GitHub is out of
reach here, so the repository is rebuilt from flask 2.0.0's sdist from PyPI, released two days before
the task's base commit: the row's patches apply to it unchanged, and its environment comes from the
packaged recipe imported from the reference harness.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from issuebench.collect.pypi_history import download_sdist, extract_sdist
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.models import InstanceStatus, Outcome, Prediction, Task
from tests.gitrepo import init_repo

pytestmark = [pytest.mark.slow, pytest.mark.network, pytest.mark.xdist_group("real-flask")]

INSTANCE = "pallets__flask-4045"


def lite_rows_path() -> Path | None:
    env = os.environ.get("ISSUEBENCH_LITE_JSONL")
    candidates = [Path(env)] if env else []
    root = Path(__file__).resolve().parents[2]
    candidates.append(root.parent / "shared" / "data" / "swe-bench-lite-test.jsonl")
    return next((p for p in candidates if p.is_file()), None)


def real_task(tmp, instance_id: str, project: str, version: str, date: str) -> tuple[Task, Path]:
    """The Lite row, with its repository rebuilt from the project's sdist of `version`."""
    rows = lite_rows_path()
    if rows is None:
        pytest.skip("SWE-bench Lite rows not found: set ISSUEBENCH_LITE_JSONL to swe-bench-lite-test.jsonl")
    row = next(json.loads(line) for line in rows.open() if f'"{instance_id}"' in line)
    sdist = download_sdist(project, version, tmp / "dl")
    if sdist is None:
        pytest.skip(f"{project} {version} sdist could not be downloaded (no package index?)")
    src = extract_sdist(sdist, tmp / "x")
    repos = tmp / "repos"
    repos.mkdir()
    src.rename(repos / row["repo"].replace("/", "__"))
    base = init_repo(repos / row["repo"].replace("/", "__"), {}, f"{project} {version} sdist", date=date)
    return Task.model_validate({**row, "base_commit": base, "environment_setup_commit": base}), repos


@pytest.fixture(scope="module")
def flask_task(tmp_path_factory) -> tuple[Task, Path]:
    return real_task(tmp_path_factory.mktemp("flask"), INSTANCE, "flask", "2.0.0", "2021-05-11T00:00:00")


def test_gold_resolves_and_a_no_op_does_not(flask_task, tmp_path):
    task, repos = flask_task
    assert task.version == "2.0" and len(task.FAIL_TO_PASS) == 2 and len(task.PASS_TO_PASS) == 50
    noop = ("diff --git a/src/flask/blueprints.py b/src/flask/blueprints.py\n"
            "--- a/src/flask/blueprints.py\n+++ b/src/flask/blueprints.py\n"
            "@@ -1,3 +1,4 @@\n+# a comment that changes nothing\n import typing as t\n"
            " from collections import defaultdict\n from functools import update_wrapper\n")
    preds = [Prediction(instance_id=INSTANCE, model_name_or_path="gold", model_patch=task.patch),
             Prediction(instance_id=INSTANCE, model_name_or_path="noop", model_patch=noop),
             Prediction(instance_id=INSTANCE, model_name_or_path="empty", model_patch="")]
    ctx = build_context(EvalOptions(output_dir=tmp_path, run_id="real", repos_dir=repos, timeout=600))
    result = run_evaluation([task], preds, ctx, workers=1)
    by_model = {r.model_name_or_path: r for r in result.reports}
    gold = by_model["gold"]
    assert gold.status is InstanceStatus.RESOLVED, gold.reason
    assert sorted(gold.tests_status.PASS_TO_PASS.success) == sorted(task.PASS_TO_PASS)
    # The environment honours the task's date: nothing newer than the recipe's cutoff.
    assert gold.exclude_newer and gold.exclude_newer.startswith("2021-05")
    noop_report = by_model["noop"]
    assert noop_report.status is InstanceStatus.UNRESOLVED and noop_report.outcome is Outcome.NO_OP
    assert sorted(noop_report.tests_status.FAIL_TO_PASS.failure) == sorted(task.FAIL_TO_PASS)
    assert by_model["empty"].status is InstanceStatus.EMPTY


def test_revalidating_the_task_gives_back_its_fail_to_pass_list(flask_task, tmp_path):
    from issuebench.collect.validation import harness_runner, validate_task

    task, repos = flask_task
    runner, _ = harness_runner(repos_dir=repos, work_dir=tmp_path, timeout=600)
    verdict = validate_task(task, runner, repeats=1)
    assert verdict.kept, (verdict.reason, verdict.detail)
    assert sorted(verdict.task.FAIL_TO_PASS) == sorted(task.FAIL_TO_PASS)
    # The official PASS_TO_PASS (50 tests) is a subset of what passes in the two touched files
    # (175 here): every one of them must still be found.
    assert set(task.PASS_TO_PASS) <= set(verdict.task.PASS_TO_PASS)


def test_a_task_whose_tests_need_the_internet_says_so(tmp_path):
    """psf__requests-2317: its tests call httpbin.org. Offline, the gold patch cannot pass them, and
    the verdict must say why rather than look like a failed fix. The task is from 2014 and its
    recipe asks for Python 3.9, so the environment's cutoff moves up to Python 3.9's release."""
    task, repos = real_task(tmp_path, "psf__requests-2317", "requests", "2.4.3", "2014-10-06T00:00:00")
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="real", repos_dir=repos, timeout=600))
    gold = Prediction(instance_id=task.instance_id, model_name_or_path="gold", model_patch=task.patch)
    report = run_evaluation([task], [gold], ctx, workers=1).reports[0]
    assert report.status is InstanceStatus.NEEDS_NETWORK, report.reason
    assert "need the internet" in report.reason
    assert report.tests_status is not None and report.tests_status.PASS_TO_PASS.success  # tests did run
    assert report.exclude_newer and report.exclude_newer.startswith("2020-10-05")
