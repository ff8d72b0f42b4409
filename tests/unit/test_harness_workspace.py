from issuebench.harness import commands
from issuebench.harness.workspace import create_workspace, git, reset_paths
from issuebench.models import EnvSpec
from tests.gitrepo import commit_files, init_repo

TEST_PATCH = """diff --git a/tests/auth_tests/test_validators.py b/tests/auth_tests/test_validators.py
--- a/tests/auth_tests/test_validators.py
+++ b/tests/auth_tests/test_validators.py
@@ -1 +1 @@
-x
+y
diff --git a/tests/test_b.py b/tests/test_b.py
new file mode 100644
"""


def test_workspace_sees_no_history_after_base(tmp_path):
    src = tmp_path / "src"
    base = init_repo(src, {"a.py": "one\n"})
    later = commit_files(src, {"a.py": "two\n", "secret_fix.py": "x\n"}, "the fix")
    ws = create_workspace(src, base, tmp_path / "work")
    assert (ws / "a.py").read_text() == "one\n"
    assert not (ws / "secret_fix.py").exists()
    assert git(ws, "cat-file", "-e", later, check=False).returncode != 0
    assert git(ws, "log", "--all", "--format=%H").stdout.split() == [base]
    assert not (ws / ".git" / "objects" / "info" / "alternates").exists()


def test_reset_paths_restores_and_deletes(tmp_path):
    src = tmp_path / "src"
    base = init_repo(src, {"tests/test_a.py": "orig\n"})
    ws = create_workspace(src, base, tmp_path / "work")
    (ws / "tests" / "test_a.py").write_text("hacked\n")
    (ws / "tests" / "conftest.py").write_text("evil\n")
    changed = reset_paths(ws, base, ["tests/test_a.py", "tests/conftest.py", "tests/untouched.py"])
    assert sorted(changed) == ["tests/conftest.py", "tests/test_a.py"]
    assert (ws / "tests" / "test_a.py").read_text() == "orig\n"
    assert not (ws / "tests" / "conftest.py").exists()


def test_test_directives_follow_the_reference():
    assert commands.files_in_diff(TEST_PATCH) == ["tests/auth_tests/test_validators.py", "tests/test_b.py"]
    django = EnvSpec(test_cmd="./tests/runtests.py --verbosity 2", test_directives="django")
    assert commands.test_targets(django, TEST_PATCH) == ["auth_tests.test_validators", "test_b"]
    assert commands.test_command(EnvSpec(test_cmd="pytest -rA"), TEST_PATCH) == \
        "pytest -rA tests/auth_tests/test_validators.py tests/test_b.py"
    assert commands.test_targets(EnvSpec(test_directives="none"), TEST_PATCH) == []
    # `python -m django test` from the root: dotted names that keep the tests package.
    assert commands.test_targets(EnvSpec(test_directives="modules"), TEST_PATCH) == \
        ["tests.auth_tests.test_validators", "tests.test_b"]


def test_workspaces_of_dead_runs_are_swept(tmp_path):
    from issuebench.harness.workspace import sweep_stale_workspaces

    src = tmp_path / "src"
    base = init_repo(src, {"a.py": "one\n"})
    mine = create_workspace(src, base, tmp_path / "work")
    dead = tmp_path / "work" / "ws-999999999-abc"
    dead.mkdir()
    output = tmp_path / "work" / "ws-999999999-abc.out"   # the killed run's test output
    output.write_text("partial\n")
    assert sweep_stale_workspaces(tmp_path / "work") == 2
    assert mine.exists() and not dead.exists() and not output.exists()


def test_instance_ids_take_several_values_after_the_flag():
    from issuebench.cli.main import expand_multi_value_options

    argv = ["eval", "--instance-ids", "a", "b", "c", "--workers", "2", "--instance_ids", "d"]
    assert expand_multi_value_options(argv) == [
        "eval", "--instance-ids", "a", "--instance-ids", "b", "--instance-ids", "c", "--workers", "2",
        "--instance-ids", "d"]


def test_the_base_commit_carries_its_nearest_tag(tmp_path):
    from tests.gitrepo import git as tgit

    src = tmp_path / "src"
    init_repo(src, {"a.py": "one\n"})
    tgit(src, "tag", "4.4.1")
    base = commit_files(src, {"a.py": "two\n"}, "after the release")
    commit_files(src, {"a.py": "three\n"}, "later")
    tgit(src, "tag", "4.5.0")
    ws = create_workspace(src, base, tmp_path / "work")
    assert git(ws, "describe", "--tags").stdout.strip() == "4.4.1"  # not 4.5.0, which came later


def test_data_files_of_a_test_patch_are_not_test_targets():
    # pallets__flask-4992's test patch adds tests/static/config.toml beside tests/test_config.py.
    patch = ("diff --git a/tests/static/config.toml b/tests/static/config.toml\n"
             "diff --git a/tests/test_config.py b/tests/test_config.py\n"
             "diff --git a/tests/data/x.csv b/tests/data/x.csv\n")
    assert commands.test_targets(EnvSpec(test_cmd="pytest -rA"), patch) == ["tests/test_config.py"]
