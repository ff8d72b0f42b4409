"""Rows whose language needs a registry this machine kind cannot reach get `needs_registry`, with
the registry named: the path runs for real up to that boundary (the row's own recipe from its
log_parser, the kind, the toolchain, the dependency fetch in the sandbox)."""

from __future__ import annotations

import shutil

import pytest

from issuebench.envs import EnvBuilder, RegistryUnreachable, resolve_spec
from issuebench.harness import EvalOptions, build_context, run_tests
from issuebench.models import EnvSpec, InstanceStatus, Task
from tests.gitrepo import init_repo

GO_MOD = "module example.com/tiny\n\ngo 1.20\n\nrequire github.com/google/go-cmp v0.5.9\n"
SCRIPT = ("#!/bin/bash\nset -uxo pipefail\ncd /testbed\ngit status\n: '>>>>> Start Test Output'\n"
          "go test -v ./...\n: '>>>>> End Test Output'\n")


def _go_task(tmp_path) -> Task:
    repo = tmp_path / "repos" / "tiny__gomod"
    base = init_repo(repo, {"go.mod": GO_MOD, "tiny.go": "package tiny\n",
                            "tiny_test.go": 'package tiny\nimport "testing"\nfunc TestX(t *testing.T) {}\n'})
    return Task(instance_id="tiny__gomod-1", repo="tiny/gomod", base_commit=base, FAIL_TO_PASS=["TestX"],
                log_parser="parse_log_gotest", eval_script=SCRIPT)


def test_a_row_no_recipe_names_gets_the_kind_its_parser_implies(tmp_path):
    spec = resolve_spec(_go_task(tmp_path))
    assert spec.kind == "go" and spec.commands_from == "row" and spec.log_parser == "gotest"
    # A Python row without a recipe is not guessed.
    with pytest.raises(Exception, match="no environment recipe"):
        resolve_spec(Task(instance_id="a-1", repo="a/b", base_commit="0" * 40, log_parser="parse_log_pytest",
                          eval_script=SCRIPT))


def test_without_the_toolchain_the_status_names_the_registry_and_the_packages(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(RegistryUnreachable) as caught:
        EnvBuilder(cache_dir=tmp_path / "envs").ensure(EnvSpec(kind="rust"), tmp_path)
    assert "the Rust crate registry" in caught.value.message and "cargo" in caught.value.message


@pytest.mark.slow
def test_a_go_row_runs_up_to_the_module_proxy_and_says_so(tmp_path):
    if shutil.which("go") is None:
        pytest.skip("needs Debian's golang-go")
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="go", repos_dir=tmp_path / "repos",
                                    timeout=120))
    run = run_tests(_go_task(tmp_path), None, ctx)
    if run.status is not InstanceStatus.NEEDS_REGISTRY:
        pytest.skip(f"this machine reaches the Go module proxy ({run.status.value})")
    assert "needs the Go module proxy, which this machine cannot reach" in run.reason
