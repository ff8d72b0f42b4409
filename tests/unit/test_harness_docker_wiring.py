"""--backend docker: the harness grades what the reference image printed, with the same rules."""

from issuebench.harness import EvalOptions, build_context, docker_backend, evaluate_instance
from issuebench.models import EnvSpec, InstanceStatus, Prediction, Task

PATCH = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
TEST_PATCH = "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1 +1 @@\n-a\n+b\n"


def task() -> Task:
    return Task(instance_id="o__r-1", repo="o/r", base_commit="a" * 40, patch=PATCH, test_patch=TEST_PATCH,
                FAIL_TO_PASS=["tests/test_a.py::test_new"], PASS_TO_PASS=["tests/test_a.py::test_old"],
                env=EnvSpec(test_cmd="pytest -rA"))


def test_docker_backend_output_is_graded_with_the_nonce(tmp_path, monkeypatch):
    seen = {}

    def fake_run(task, model_patch, test_cmd, nonce, limits):
        seen.update(cmd=test_cmd, patch=model_patch)
        fake = ">>>>> Start Test Output\nPASSED tests/test_a.py::test_old\n>>>>> End Test Output\n"
        real = (f">>>>> Start Test Output {nonce}\nPASSED tests/test_a.py::test_new\n"
                f"PASSED tests/test_a.py::test_old\n>>>>> End Test Output {nonce}\n")
        return fake + real, "ok"

    monkeypatch.setattr(docker_backend, "run_in_docker", fake_run)
    ctx = build_context(EvalOptions(output_dir=tmp_path, run_id="d", backend="docker"))
    report = evaluate_instance(task(), Prediction(instance_id="o__r-1", model_name_or_path="m", model_patch=PATCH), ctx)
    assert report.status is InstanceStatus.RESOLVED
    assert seen == {"cmd": "pytest -rA tests/test_a.py", "patch": PATCH}


def test_docker_apply_failure_and_timeout_keep_their_statuses(tmp_path, monkeypatch):
    ctx = build_context(EvalOptions(output_dir=tmp_path, run_id="d", backend="docker", use_cache=False))
    pred = Prediction(instance_id="o__r-1", model_name_or_path="m", model_patch=PATCH)
    for status, expected in (("apply_failed", InstanceStatus.APPLY_FAILED), ("timeout", InstanceStatus.TIMEOUT),
                             ("docker_failed", InstanceStatus.SANDBOX_FAILED)):
        monkeypatch.setattr(docker_backend, "run_in_docker", lambda *a, s=status: ("", s))
        assert evaluate_instance(task(), pred, ctx).status is expected
