"""A test patch that moves a submodule (a pull request updating its test data, as tinycss2's
css-parsing-tests): the rest of the patch applies, and the folder is filled again at the new
commit from the submodule's clone, through the harness's own path."""

from __future__ import annotations

from issuebench.harness import EvalOptions, build_context, run_tests
from issuebench.models import EnvSpec, Task
from issuebench.patch import submodule_moves
from tests.gitrepo import commit_files, git, init_repo

CHECK = ("if [ \"$(cat data/cases/v.txt)\" = 2 ]; then echo '[ok]: moved data'; else echo '[err]: moved data'; fi\n"
         "if [ -f fixed.txt ]; then echo '[ok]: fixed'; else echo '[err]: fixed'; fi\n")


def _task(tmp_path) -> Task:
    cases = tmp_path / "repos" / "acme__cases"
    old = init_repo(cases, {"cases/v.txt": "1\n"})
    new = commit_files(cases, {"cases/v.txt": "2\n"}, "newer cases")
    repo = tmp_path / "repos" / "tiny__sub"
    init_repo(repo, {"check.sh": CHECK, ".gitmodules": '[submodule "data"]\n\tpath = data\n'
                                                       '\turl = https://github.com/acme/cases.git\n'})
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{old},data")
    git(repo, "commit", "-qm", "data at the old cases")
    base = git(repo, "rev-parse", "HEAD")
    fixed = commit_files(repo, {"fixed.txt": "yes\n"}, "the fix")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{new},data")
    git(repo, "commit", "-qm", "the newer cases")
    tested = git(repo, "rev-parse", "HEAD")
    test_patch = git(repo, "diff", fixed, tested) + "\n"
    assert f"+Subproject commit {new}" in test_patch
    script = ("#!/bin/bash\ncd /testbed\n: '>>>>> Start Test Output'\nsh check.sh\n: '>>>>> End Test Output'\n")
    return Task(instance_id="tiny__sub-1", repo="tiny/sub", base_commit=base, patch=git(repo, "diff", base, fixed) + "\n",
                test_patch=test_patch, FAIL_TO_PASS=["moved data", "fixed"], PASS_TO_PASS=[],
                log_parser="parse_log_redis", eval_script=script,
                env=EnvSpec(kind="native", commands_from="row", submodules={"data": "acme/cases"}))


def test_a_submodule_the_test_patch_moves_is_filled_at_its_new_commit(tmp_path) -> None:
    task = _task(tmp_path)
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="moves", repos_dir=tmp_path / "repos",
                                    timeout=120))
    gold = run_tests(task, task.patch, ctx)
    assert gold.status_map == {"moved data": "PASSED", "fixed": "PASSED"}, gold.reason
    assert any(note.startswith("submodule data filled from acme/cases at") for note in gold.notes), gold.notes
    # Without the test patch the folder keeps the base commit's cases.
    before = run_tests(task, task.patch, ctx, apply_test_patch=False)
    assert before.status_map["moved data"] == "FAILED"


def test_a_patch_without_moves_is_left_as_it_is() -> None:
    text = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n"
    assert submodule_moves(text) == (text, {})
