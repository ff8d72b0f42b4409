"""A test that needs a package the environment could not install is named in the verdict's reason.

xarray's conda environment file names cdms2, which has no release on the package index: the build
leaves it out, and the tests that import it are skipped in every run, so gold cannot resolve those
rows here. The reason must say so, not only that the tests are absent from the log. A real build
from a real conda environment file (pytest from the index, cdms2 left out), graded through eval.
"""

from __future__ import annotations

import pytest

from issuebench.harness import EvalOptions, build_context, evaluate_instance
from issuebench.models import EnvSpec, InstanceStatus, Prediction, Task
from tests.gitrepo import commit_files, diff_between, init_repo

pytestmark = [pytest.mark.slow, pytest.mark.network]

DATE = "2023-06-01T00:00:00Z"
TESTS = ("import pytest\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n"
         "def test_cdms():\n    pytest.importorskip('cdms2')\n")


def test_a_skip_for_a_package_the_environment_left_out_is_named_in_the_reason(tmp_path):
    repo = tmp_path / "repos" / "tiny__calc"
    base = init_repo(repo, {"environment.yml": "name: t\ndependencies:\n  - python=3.11\n  - pytest\n  - cdms2\n",
                            "calc.py": "def add(a, b):\n    return a - b\n"}, date=DATE)
    fixed = commit_files(repo, {"calc.py": "def add(a, b):\n    return a + b\n"}, "fix", date=DATE)
    tested = commit_files(repo, {"test_calc.py": TESTS}, "test", date=DATE)
    task = Task(instance_id="tiny__calc-1", repo="tiny/calc", base_commit=base, created_at=DATE,
                patch=diff_between(repo, base, fixed), test_patch=diff_between(repo, fixed, tested),
                FAIL_TO_PASS=["test_calc.py::test_add"], PASS_TO_PASS=["test_calc.py::test_cdms"],
                env=EnvSpec(python="3.11", requirements_files=["environment.yml"], exclude_newer=DATE,
                            test_cmd="pytest -rA", log_parser="parse_log_pytest"))
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="left-out", repos_dir=tmp_path / "repos",
                                    timeout=300))
    report = evaluate_instance(task, Prediction(instance_id=task.instance_id, model_patch=task.patch), ctx)

    assert report.status is InstanceStatus.UNRESOLVED, report.reason
    assert report.tests_status.FAIL_TO_PASS.success == ["test_calc.py::test_add"]
    assert "test_calc.py::test_cdms" in report.tests_status.PASS_TO_PASS.failure
    assert "could not import cdms2, which the environment left out" in report.reason, report.reason
