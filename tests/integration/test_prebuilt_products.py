"""A recipe's pre_test (an in-place build) runs once per checkout and environment on the pristine
tree; later runs start from its products and rebuild only what their patch changed, and no
patch's build ever reaches another run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from issuebench.harness import EvalOptions, build_context, run_tests
from issuebench.harness.prebuilt import DONE, layer_path
from issuebench.harness.workspace import pristine_checkout
from issuebench.models import EnvSpec, Task
from tests.gitrepo import commit_files, diff_between, init_repo

MAIN = ('#include <stdio.h>\nint add(int, int);\n'
        'int main(void) { printf(add(2, 2) == 4 ? "[ok]: adds\\n" : "[err]: adds\\n"); return 0; }\n')
MAKEFILE = "calc: add.c main.c\n\tgcc -o calc add.c main.c\n"


@pytest.mark.slow
def test_the_pristine_build_is_made_once_and_a_patched_build_stays_in_its_own_run(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("needs Debian's gcc and make (scripts/install-system.sh --test-tools)")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repos" / "tiny__calc"
    base = init_repo(repo, {"Makefile": MAKEFILE, "main.c": MAIN, "add.c": "int add(int a, int b) { return a - b; }\n"})
    fixed = commit_files(repo, {"add.c": "int add(int a, int b) { return a + b; }\n"}, "fix")
    task = Task(instance_id="tiny__calc-1", repo="tiny/calc", base_commit=base, patch=diff_between(repo, base, fixed),
                test_patch="", FAIL_TO_PASS=["adds"], PASS_TO_PASS=[], log_parser="parse_log_redis",
                env=EnvSpec(kind="native", pre_test=["make"], test_cmd="./calc"))
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="r", repos_dir=tmp_path / "repos",
                                    timeout=120))

    gold = run_tests(task, task.patch, ctx)
    assert gold.status_map == {"adds": "PASSED"}, gold.reason
    assert "gcc -o calc" in gold.output  # its patch made add.c newer than the pristine product
    assert gold.durations.get("prebuild", 0) > 0
    layer = layer_path(pristine_checkout(repo, base, task.repo), gold.env_hash)
    assert (layer / DONE).is_file() and (layer / "calc").is_file()

    unpatched = run_tests(task, None, ctx)
    assert unpatched.status_map == {"adds": "FAILED"}  # the pristine product, not the gold run's
    assert "gcc -o calc" not in unpatched.output and "up to date" in unpatched.output
    assert "prebuild" not in unpatched.durations
    assert any("laid over the workspace" in note for note in unpatched.notes)

    again = run_tests(task, task.patch, ctx)
    assert again.status_map == {"adds": "PASSED"} and "gcc -o calc" in again.output


@pytest.mark.slow
def test_a_rows_own_build_steps_run_in_every_run_as_the_row_says(tmp_path: Path, monkeypatch) -> None:
    """A row's eval_script steps (here one that appends) are not promised to be harmless twice."""
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repos" / "tiny__log"
    base = init_repo(repo, {"check.sh": "[ \"$(wc -l < built.txt)\" -eq 1 ] && echo '[ok]: once' || echo '[err]: once'\n",
                            "built.txt": ""})
    script = ("#!/bin/bash\ncd /testbed\necho line >> built.txt\n"
              ": '>>>>> Start Test Output'\nsh check.sh\n: '>>>>> End Test Output'\n")
    task = Task(instance_id="tiny__log-1", repo="tiny/log", base_commit=base, patch="", test_patch="",
                FAIL_TO_PASS=["once"], PASS_TO_PASS=[], log_parser="parse_log_redis", eval_script=script,
                env=EnvSpec(kind="native", commands_from="row"))
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="r", repos_dir=tmp_path / "repos",
                                    timeout=120))
    for _ in range(2):
        run = run_tests(task, None, ctx)
        assert run.status_map == {"once": "PASSED"}, run.output
        assert "prebuild" not in run.durations


OBJECTS_MAKEFILE = ("calc: add.o main.o\n\tgcc -o calc add.o main.o\n"
                    "%.o: %.c\n\tgcc -g -c $< -o $@\n")
NO_CACHE_CHECK = ("./calc; [ -z \"${CCACHE_DIR:-}\" ] && [ \"$(command -v gcc)\" = /usr/bin/gcc ] "
                  "&& echo '[ok]: no compile cache' || echo '[err]: no compile cache'")


@pytest.mark.slow
def test_a_second_checkouts_pristine_build_reuses_the_first_ones_compiles_and_a_patched_build_none(
        tmp_path: Path, monkeypatch) -> None:
    """Two base commits of one repository version, one environment: the second pristine build takes
    the files it shares with the first from the compile cache; no patched run is given the cache."""
    if shutil.which("gcc") is None or shutil.which("make") is None or shutil.which("ccache") is None:
        pytest.skip("needs Debian's gcc, make and ccache (scripts/install-system.sh --test-tools)")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repos" / "tiny__calc"
    first = init_repo(repo, {"Makefile": OBJECTS_MAKEFILE, "main.c": MAIN,
                             "add.c": "int add(int a, int b) { return a - b; }\n"})
    second = commit_files(repo, {"README": "calc\n"}, "docs")
    fixed = commit_files(repo, {"add.c": "int add(int a, int b) { return a + b; }\n"}, "fix")
    env = EnvSpec(kind="native", pre_test=["make"], test_cmd=NO_CACHE_CHECK)
    tasks = [Task(instance_id=f"tiny__calc-{i}", repo="tiny/calc", base_commit=base,
                  patch=diff_between(repo, base, fixed), test_patch="", FAIL_TO_PASS=["adds"],
                  PASS_TO_PASS=["no compile cache"], log_parser="parse_log_redis", env=env)
             for i, base in enumerate((first, second))]
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="r", repos_dir=tmp_path / "repos",
                                    timeout=120))

    runs = [run_tests(task, task.patch, ctx) for task in tasks]
    assert [r.status_map for r in runs] == [{"adds": "PASSED", "no compile cache": "PASSED"}] * 2, runs[0].output
    assert "compile cache: 0 of 2 compiles reused from earlier builds of this environment" in runs[0].notes
    assert "compile cache: 2 of 2 compiles reused from earlier builds of this environment" in runs[1].notes
    # Each gold run rebuilt add.o itself, outside the cache: nothing of a patch's build is in it.
    assert all("gcc -g -c add.c" in r.output for r in runs)
