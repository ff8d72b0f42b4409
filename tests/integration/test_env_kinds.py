"""Environment kinds on real small projects the tests build: a tiny npm project whose jasmine
comes from the npm registry, run on a Node of its era; a tiny C project built with make by the
row's own eval_script, graded through the harness; an unknown kind named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from issuebench.envs import KINDS, EnvBuilder, UnknownKind
from issuebench.harness import EvalOptions, build_context, run_tests
from issuebench.models import EnvSpec, Task
from issuebench.sandbox import get_sandbox
from tests.gitrepo import commit_files, diff_between, init_repo

SPEC = "describe('add', () => { it('adds', () => { expect(require('../add')(1, 2)).toBe(3); }); });\n"


def _npm_project(path: Path) -> None:
    init_repo(path, {
        "package.json": json.dumps({"name": "tiny", "version": "1.0.0", "devDependencies": {"jasmine": "3.5.0"}}),
        "add.js": "module.exports = (a, b) => a + b;\n",
        "spec/support/jasmine.json": json.dumps({"spec_dir": "spec", "spec_files": ["*.spec.js"]}),
        "spec/add.spec.js": SPEC,
    }, date="2020-06-01T00:00:00Z")


@pytest.mark.network
@pytest.mark.slow
def test_node_kind_builds_once_from_the_registry_and_runs_offline(tmp_path):
    repo = tmp_path / "tiny"
    _npm_project(repo)
    other = tmp_path / "other"   # a second instance's workspace, as pristine as the first
    shutil.copytree(repo, other)
    builder = EnvBuilder(cache_dir=tmp_path / "envs", sandbox=get_sandbox())
    spec = EnvSpec(kind="node", node="12", exclude_newer="2020-06-01T00:00:00Z")
    env = builder.ensure(spec, repo)
    assert env.manifest["node"].startswith("12.") and env.manifest["package_manager"].startswith("npm@6.")
    # node_modules moved into the environment: the workspace keeps none of its own.
    assert env.manifest["node_modules"] == ["node_modules"] and not (repo / "node_modules").exists()
    assert "jasmine@3.5.0" in env.manifest["installed"]
    again = builder.ensure(spec, other)
    assert again.env_hash == env.env_hash and again.manifest["built_at"] == env.manifest["built_at"]
    prep = builder.prepare_run(again, other)
    result = builder.sandbox.run(["bash", "-c", "node --version; ./node_modules/.bin/jasmine"], workspace=other,
                                 binds=prep.binds, env=prep.env, network=False)
    assert result.returncode == 0, result.output
    assert f"v{env.manifest['node']}" in result.output and "1 spec, 0 failures" in result.output


@pytest.mark.network
@pytest.mark.slow
def test_a_dependency_the_patch_adds_to_package_json_is_there_offline(tmp_path):
    # The reference's eval script runs `npm install` after the patch, online; ours runs offline, so
    # what the patched package.json adds comes from a layer installed beside the shared node_modules.
    repo = tmp_path / "tiny"
    _npm_project(repo)
    builder = EnvBuilder(cache_dir=tmp_path / "envs", sandbox=get_sandbox())
    spec = EnvSpec(kind="node", node="12", exclude_newer="2020-06-01T00:00:00Z")
    env = builder.ensure(spec, repo)
    manifest = json.loads((repo / "package.json").read_text())
    manifest["devDependencies"]["is-number"] = "^7.0.0"
    (repo / "package.json").write_text(json.dumps(manifest))
    check = ("node -e \"console.log('cjs', require('is-number')(5))\" && "
             "node --input-type=module -e \"import n from 'is-number'; console.log('esm', n('x'))\"")
    plain = builder.prepare_run(env, repo)
    before = builder.sandbox.run(["bash", "-c", check], workspace=repo, binds=plain.binds, env=plain.env,
                                 network=False)
    assert before.returncode != 0 and "Cannot find module 'is-number'" in before.output
    patched = builder.prepare_patched_run(env, repo, plain)
    assert any("is-number@^7.0.0" in note for note in patched.notes)
    after = builder.sandbox.run(["bash", "-c", check], workspace=repo, binds=patched.binds, env=patched.env,
                                network=False)
    assert after.returncode == 0, after.output
    assert "cjs true" in after.output and "esm false" in after.output
    # The project's own packages are not shadowed: jasmine still runs from the environment's tree.
    assert builder.sandbox.run(["bash", "-c", "./node_modules/.bin/jasmine"], workspace=repo, binds=patched.binds,
                               env=patched.env, network=False).returncode == 0


@pytest.mark.network
@pytest.mark.slow
def test_a_prepare_script_writing_git_config_builds_and_leaves_the_real_git_alone(tmp_path):
    # preact's `prepare` ends in npm-merge-driver-install, which writes a merge driver into
    # .git/config and fails the install when it cannot (the sandbox's .git is read-only).
    repo = tmp_path / "tiny"
    prepare = "git config --local merge.lockfiles.driver 'node merge.js %A' && echo prepared"
    init_repo(repo, {"package.json": json.dumps({"name": "tiny", "version": "1.0.0", "scripts": {"prepare": prepare}}),
                     "index.js": "module.exports = 1;\n"}, date="2022-06-01T00:00:00Z")
    config_before = (repo / ".git/config").read_text()
    builder = EnvBuilder(cache_dir=tmp_path / "envs", sandbox=get_sandbox())
    env = builder.ensure(EnvSpec(kind="node", node="16", exclude_newer="2022-06-01T00:00:00Z"), repo)
    assert "prepared" in (env.path / "build.log").read_text()
    assert (repo / ".git/config").read_text() == config_before


@pytest.mark.network
@pytest.mark.slow
def test_babel_registers_cache_goes_to_the_runs_tmp_not_the_read_only_node_modules(tmp_path):
    # p5.js 0.9's grunt loads @babel/register, whose cache defaults to node_modules/.cache: with the
    # environment's node_modules read-only the run stopped at exit with EROFS.
    repo = tmp_path / "tiny"
    deps = {"@babel/core": "7.4.0", "@babel/register": "7.4.0"}
    init_repo(repo, {"package.json": json.dumps({"name": "tiny", "version": "1.0.0", "devDependencies": deps}),
                     "add.js": "module.exports = (a, b) => a + b;\n"}, date="2019-06-01T00:00:00Z")
    builder = EnvBuilder(cache_dir=tmp_path / "envs", sandbox=get_sandbox())
    env = builder.ensure(EnvSpec(kind="node", node="12", exclude_newer="2019-06-01T00:00:00Z"), repo)
    prep = builder.prepare_run(env, repo)
    run = "node -e \"require('@babel/register'); console.log('sum', require('./add')(1, 2))\" && ls /tmp"
    result = builder.sandbox.run(["bash", "-c", run], workspace=repo, binds=prep.binds, env=prep.env, network=False)
    assert result.returncode == 0, result.output
    assert "sum 3" in result.output and "babel-register-cache.json" in result.output


@pytest.mark.network
@pytest.mark.slow
def test_a_pnpm_that_cannot_fetch_on_its_node_is_replaced_by_the_last_of_its_major(tmp_path):
    # Chart.js 4's recipe pins the reference's pnpm 7.9.0 and Node 21.6.2: every fetch of that pnpm
    # throws ERR_INVALID_THIS on that Node.
    repo = tmp_path / "tiny"
    init_repo(repo, {"package.json": json.dumps({"name": "tiny", "version": "1.0.0",
                                                 "devDependencies": {"is-number": "7.0.0"}}),
                     "index.js": "module.exports = require('is-number');\n"}, date="2023-02-01T00:00:00Z")
    builder = EnvBuilder(cache_dir=tmp_path / "envs", sandbox=get_sandbox())
    spec = EnvSpec(kind="node", node="21.6.2", package_manager="pnpm@7.9.0", exclude_newer="2023-02-01T00:00:00Z",
                   install=["pnpm install --no-frozen-lockfile"],   # no lockfile here; CI means frozen
                   env_vars={"npm_config_fetch_retries": "0"})   # fail fast, not after pnpm's minute of retries
    env = builder.ensure(spec, repo)
    log = (env.path / "build.log").read_text()
    assert "must be of type URLSearchParams" in log and "again with pnpm 7." in log
    assert env.manifest["package_manager"].startswith("pnpm@7.") and env.manifest["package_manager"] != "pnpm@7.9.0"
    prep = builder.prepare_run(env, repo)
    result = builder.sandbox.run(["bash", "-c", "node -e \"console.log('is', require('./index')(5))\""],
                                 workspace=repo, binds=prep.binds, env=prep.env, network=False)
    assert "is true" in result.output, result.output


def test_an_unknown_kind_is_named_with_the_known_ones(tmp_path):
    with pytest.raises(UnknownKind) as caught:
        EnvBuilder(cache_dir=tmp_path).ensure(EnvSpec(kind="cobol"), tmp_path)
    hint = caught.value.hint or ""
    assert "cobol" in caught.value.message and ", ".join(sorted(KINDS)) in hint
    assert all(name in hint for name in ("native", "node", "python"))


C_TEST = """#include <stdio.h>
int add(int a, int b);
int main(void) {
    printf(add(2, 2) == 4 ? "[ok]: add two numbers (0 ms)\\n" : "[err]: add two numbers\\n");
    printf("[ok]: always (0 ms)\\n");
    return 0;
}
"""


def _eval_script(base: str, test_patch: str) -> str:
    return (f"#!/bin/bash\nset -uxo pipefail\ncd /testbed\ngit status\ngit checkout {base} test.c\n"
            f"git apply -v - <<'EOF_1'\n{test_patch}EOF_1\nmake clean\nmake test_add\n"
            ": '>>>>> Start Test Output'\n./test_add\n: '>>>>> End Test Output'\n"
            f"git checkout {base} test.c\n")


@pytest.mark.slow
def test_native_kind_runs_the_rows_build_and_test_command_through_the_harness(tmp_path):
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("needs Debian's gcc and make (scripts/install-system.sh --test-tools)")
    repo = tmp_path / "repos" / "tiny__calc"
    base = init_repo(repo, {"Makefile": "test_add: add.c test.c\n\tgcc -o test_add add.c test.c\nclean:\n\trm -f test_add\n",
                            "add.c": "int add(int a, int b) { return a - b; }\n",
                            "test.c": C_TEST.replace('printf(add(2, 2)', '(void)add;\n    printf(0')})
    fixed = commit_files(repo, {"add.c": "int add(int a, int b) { return a + b; }\n"}, "fix")
    tested = commit_files(repo, {"test.c": C_TEST}, "test")
    task = Task(instance_id="tiny__calc-1", repo="tiny/calc", base_commit=base, patch=diff_between(repo, base, fixed),
                test_patch=diff_between(repo, fixed, tested), FAIL_TO_PASS=["add two numbers"],
                PASS_TO_PASS=["always"], log_parser="parse_log_redis",
                eval_script=_eval_script(base, diff_between(repo, fixed, tested)),
                env=EnvSpec(kind="native", commands_from="row"))
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="native", repos_dir=tmp_path / "repos",
                                    timeout=120))
    gold = run_tests(task, task.patch, ctx)
    assert gold.status_map == {"add two numbers": "PASSED", "always": "PASSED"}, gold.reason
    assert gold.command == "./test_add" and "make test_add" in gold.script
    broken = run_tests(task, None, ctx)
    assert broken.status_map["add two numbers"] == "FAILED"


def test_a_recipes_process_limit_replaces_the_sandboxs_default(tmp_path):
    """A suite that holds more processes at once than the sandbox's default (micropython's thread
    tests) is stopped as a fork bomb, unless its recipe sets max_procs."""
    repo = tmp_path / "repos" / "tiny__procs"
    many = "for i in $(seq 300); do sleep 3 & done; wait; echo '[ok]: many at once (0 ms)'\n"
    # The fix is in work.sh: many.sh, which the test command names, is the runner a patch may not change.
    base = init_repo(repo, {"many.sh": "sh work.sh\n", "work.sh": "echo '[err]: many at once'\n"})
    fixed = commit_files(repo, {"work.sh": many}, "fix")
    script = ("#!/bin/bash\ncd /testbed\n: '>>>>> Start Test Output'\nsh many.sh\n: '>>>>> End Test Output'\n")
    task = Task(instance_id="tiny__procs-1", repo="tiny/procs", base_commit=base, patch=diff_between(repo, base, fixed),
                test_patch="", FAIL_TO_PASS=["many at once"], PASS_TO_PASS=[], log_parser="parse_log_redis",
                eval_script=script, env=EnvSpec(kind="native", commands_from="row"))
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="procs", repos_dir=tmp_path / "repos",
                                    timeout=120))
    if ctx.limits.max_procs is None or ctx.limits.max_procs >= 300:
        pytest.skip("the sandbox's default process limit is not under 300 here")
    stopped = run_tests(task, task.patch, ctx)
    assert stopped.status == "process_limit", stopped.reason
    assert "set max_procs in the recipe" in stopped.reason
    allowed = run_tests(task.model_copy(update={"env": task.env.model_copy(update={"max_procs": 600})}), task.patch, ctx)
    assert allowed.status_map == {"many at once": "PASSED"}, allowed.reason
