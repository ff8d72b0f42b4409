"""The Docker backend up to the engine call, with a fake client that records calls."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from dataclasses import dataclass

import pytest

from issuebench.harness import docker_backend as db
from issuebench.models import Task

TEST_PATCH = """diff --git a/tests/test_x.py b/tests/test_x.py
--- a/tests/test_x.py
+++ b/tests/test_x.py
@@ -1 +1,2 @@
 a = 1
+b = 2
"""
MODEL_PATCH = """diff --git a/x.py b/x.py
--- a/x.py
+++ b/x.py
@@ -1 +1 @@
-x = 1
+x = 2
"""


@dataclass
class Limits:
    timeout: float = 30.0
    memory_mb: int | None = 2048
    max_procs: int | None = 128


class FakeContainer:
    def __init__(self, log: list, exit_code: int = 0, hang: bool = False, output: bytes = b"",
                 gone: bool = False) -> None:
        self.log, self.exit_code, self.hang, self.output, self.gone = log, exit_code, hang, output, gone
        self.archive: bytes | None = None

    def put_archive(self, path, data):
        self.log.append(("put_archive", path))
        self.archive = data
        return True

    def start(self):
        self.log.append(("start",))

    def logs(self, stream=False, follow=False):
        return iter([self.output])

    def wait(self, timeout=None):
        self.log.append(("wait", timeout))
        if self.hang:
            import requests

            raise requests.exceptions.ReadTimeout("Read timed out. (read timeout=5)")
        if self.gone:
            import requests

            raise requests.exceptions.ConnectionError("Connection aborted: connection refused")
        return {"StatusCode": self.exit_code}

    def kill(self):
        self.log.append(("kill",))

    def remove(self, force=False):
        self.log.append(("remove", force))


class FakeClient:
    def __init__(self, **container_kw) -> None:
        self.log: list = []
        self.created: dict | None = None
        self.container = FakeContainer(self.log, **container_kw)
        self.containers = self

    def create(self, **kwargs):
        self.created = kwargs
        self.log.append(("create",))
        return self.container

    def list(self, all=False, filters=None):
        self.log.append(("list", filters))
        return [self.container]

    def ping(self):
        return True


def _task(**kw) -> Task:
    base = {"instance_id": "psf__requests-2317", "repo": "psf/requests", "base_commit": "b" * 40,
            "test_patch": TEST_PATCH}
    base.update(kw)
    return Task(**base)


def _archive_files(data: bytes) -> dict[str, str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}


def test_image_name_follows_the_reference_and_the_row_wins():
    assert db.image_name(_task()) == "swebench/sweb.eval.x86_64.psf_1776_requests-2317:latest"
    assert db.image_name(_task(instance_id="Foo__Bar-1")) == "swebench/sweb.eval.x86_64.foo_1776_bar-1:latest"
    assert db.image_name(_task(image="me/img:1")) == "me/img:1"


def test_container_config_is_locked_down():
    cfg = db.container_config(_task(), Limits())
    assert cfg["network_disabled"] is True and cfg["auto_remove"] is True
    assert cfg["mem_limit"] == "2048m" and cfg["memswap_limit"] == "2048m"
    assert cfg["pids_limit"] == 128 and cfg["nano_cpus"] == int(1e9)
    assert cfg["labels"][db.LABEL] == "1" and cfg["labels"][db.LABEL_PID] == str(os.getpid())
    assert cfg["labels"]["issuebench.instance"] == "psf__requests-2317"
    assert not any("nonce" in key for key in cfg["labels"])


def test_run_sends_patches_and_script_then_reads_output():
    client = FakeClient(output=f"applied\n{db.TESTS_BEGIN}\nPASSED t\n{db.TESTS_BEGIN}\n".encode())
    out, status = db.run_in_docker(_task(), MODEL_PATCH, "pytest -rA tests/test_x.py", "n1", Limits(), client=client)
    assert status == "ok"
    # The host marks what follows the script's own first line; a second one printed by the tests is output.
    section = out.split(">>>>> Start Test Output n1\n")[1].split(">>>>> End Test Output n1")[0]
    assert section.startswith("PASSED t\n") and db.TESTS_BEGIN in section and "applied" not in section
    assert [c[0] for c in client.log][:4] == ["create", "put_archive", "start", "wait"]
    assert ("wait", 30.0) in client.log
    files = _archive_files(client.container.archive)
    assert files["issuebench/model.patch"] == MODEL_PATCH and files["issuebench/test.patch"] == TEST_PATCH
    script = files["issuebench/run.sh"]
    # Order: apply model patch, reset test files, apply test patch, hand over to the test command.
    order = [script.index(s) for s in ("model.patch", "git checkout " + "b" * 40 + " -- tests/test_x.py",
                                       "test.patch", db.TESTS_BEGIN, "pytest -rA tests/test_x.py")]
    assert order == sorted(order)
    assert "n1" not in script  # the nonce never enters the container


def test_no_model_patch_means_no_apply_step():
    client = FakeClient()
    db.run_in_docker(_task(), None, "pytest", "n", Limits(), client=client)
    files = _archive_files(client.container.archive)
    assert "issuebench/model.patch" not in files and "model.patch" not in files["issuebench/run.sh"]


@pytest.mark.parametrize(("code", "status"), [(db.APPLY_FAILED_EXIT, "apply_failed"), (137, "memory_limit"), (1, "ok")])
def test_exit_codes_map_to_statuses(code, status):
    assert db.run_in_docker(_task(), MODEL_PATCH, "pytest", "n", Limits(), client=FakeClient(exit_code=code))[1] == status


def test_timeout_kills_the_container():
    client = FakeClient(hang=True)
    out, status = db.run_in_docker(_task(), MODEL_PATCH, "pytest", "n", Limits(timeout=5), client=client)
    assert status == "timeout" and ("kill",) in client.log and "timed out" in out


def test_an_engine_that_goes_away_is_not_a_timeout():
    client = FakeClient(gone=True)
    out, status = db.run_in_docker(_task(), MODEL_PATCH, "pytest", "n", Limits(timeout=5), client=client)
    assert status == "docker_failed" and "connection refused" in out


def test_cleanup_removes_labelled_containers():
    client = FakeClient()
    assert db.cleanup_containers(client, pid=123) == 1
    assert ("list", {"label": f"{db.LABEL_PID}=123"}) in client.log and ("remove", True) in client.log


def test_script_runs_in_bash_and_reports_apply_failure(tmp_path):
    """The generated script itself, run by bash against a real git repo standing in for /testbed."""
    repo = tmp_path / "testbed"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    (repo / "x.py").write_text("x = 9\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_x.py").write_text("a = 1\n")
    subprocess.run("git init -q && git add -A && git commit -qm i", shell=True, cwd=repo, check=True, env=env)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    stage = tmp_path / "stage"
    stage.mkdir()
    (stage / "model.patch").write_text(MODEL_PATCH)   # does not apply: x.py holds 9
    (stage / "test.patch").write_text(TEST_PATCH)
    script = db.eval_script(_task(base_commit=sha), "cat tests/test_x.py", MODEL_PATCH)
    script = script.replace(db.TESTBED, str(repo)).replace(db.STAGE, str(stage))
    script = script.replace("git config --global", "true")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == db.APPLY_FAILED_EXIT and "Patch Apply Failed" in proc.stdout
    # With an applicable patch the test patch applies and the output sits between the markers.
    (repo / "x.py").write_text("x = 1\n")
    subprocess.run("git commit -qam one", shell=True, cwd=repo, check=True, env=env)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    script = db.eval_script(_task(base_commit=sha), "cat tests/test_x.py", MODEL_PATCH)
    script = script.replace(db.TESTBED, str(repo)).replace(db.STAGE, str(stage)).replace("git config --global", "true")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    section = db.mark_test_output(proc.stdout, "zz").split(">>>>> Start Test Output zz")[1]
    assert "b = 2" in section.split(">>>>> End Test Output zz")[0]


def test_the_model_change_guards_of_the_local_backend_apply_in_the_container(tmp_path):
    """conftest.py, sitecustomize.py and a changed pytest section are put back; the rest of the fix stays."""
    repo = tmp_path / "testbed"
    (repo / "tests").mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    (repo / "x.py").write_text("x = 1\n")
    (repo / "tests" / "test_x.py").write_text("a = 1\n")
    (repo / "setup.cfg").write_text("[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n")
    (repo / "tox.ini").write_text("[tox]\nenvlist = py3\n\n[pytest]\nxfail_strict = true\n")
    subprocess.run("git init -q && git add -A && git commit -qm i", shell=True, cwd=repo, check=True, env=env)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    edit = repo.parent / "edit"
    subprocess.run(["git", "clone", "-q", str(repo), str(edit)], check=True, env=env)
    (edit / "x.py").write_text("x = 2\n")
    (edit / "conftest.py").write_text("import evil\n")
    (edit / "src").mkdir()
    (edit / "src" / "sitecustomize.py").write_text("import evil\n")
    (edit / "setup.cfg").write_text("[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q -p evil\n")
    (edit / "tox.ini").write_text("[tox]\nenvlist = py3,py4\n\n[pytest]\nxfail_strict = true\n")
    subprocess.run(["git", "add", "-A"], cwd=edit, check=True, env=env)
    model_patch = subprocess.run(["git", "diff", "--cached"], cwd=edit, capture_output=True, text=True).stdout
    put_back, configs = db.guarded_files(model_patch, TEST_PATCH)
    assert sorted(put_back) == ["conftest.py", "src/sitecustomize.py"]
    assert sorted(configs) == ["setup.cfg", "tox.ini"]
    stage = tmp_path / "stage"
    stage.mkdir()
    (stage / "model.patch").write_text(model_patch)
    (stage / "test.patch").write_text(TEST_PATCH)
    script = db.eval_script(_task(base_commit=sha), "ls", model_patch)
    script = script.replace(db.TESTBED, str(repo)).replace(db.STAGE, str(stage)).replace("git config --global", "true")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / "x.py").read_text() == "x = 2\n"  # the fix itself stays
    assert not (repo / "conftest.py").exists() and not (repo / "src" / "sitecustomize.py").exists()
    assert "-p evil" not in (repo / "setup.cfg").read_text()  # its pytest section changed: put back
    assert "py4" in (repo / "tox.ini").read_text()  # only [tox] changed: the model's edit stays
    assert not stage.exists()  # nothing staged is left for the tests to read
