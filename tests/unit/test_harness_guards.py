from issuebench.harness.guards import (
    changed_runner_config,
    cut_after_runner_summary,
    is_hook_file,
    undo_model_changes,
)
from issuebench.harness.workspace import create_workspace
from tests.gitrepo import init_repo

PYTEST_LOG = """PASSED tests/test_a.py::test_x
FAILED tests/test_a.py::test_y - assert 1 == 2
========================= 1 failed, 1 passed in 0.12s ==========================
PASSED tests/test_a.py::test_y
"""
UNITTEST_LOG = """test_y (tests.test_a.T.test_y) ... FAIL

----------------------------------------------------------------------
Ran 1 test in 0.001s

FAILED (failures=1)
test_y (tests.test_a.T.test_y) ... ok
"""


def test_output_after_the_runners_closing_line_is_not_graded():
    assert cut_after_runner_summary(PYTEST_LOG).splitlines()[-1].startswith("=====")
    assert "PASSED tests/test_a.py::test_y" not in cut_after_runner_summary(PYTEST_LOG)
    cut = cut_after_runner_summary(UNITTEST_LOG)
    assert cut.rstrip().endswith("FAILED (failures=1)") and "... ok" not in cut
    old_style = "PASSED t\n===== 1 passed in 0.50 seconds =====\nPASSED fake\n"
    assert "fake" not in cut_after_runner_summary(old_style)
    assert cut_after_runner_summary("no closing line\n") == "no closing line\n"


def test_runner_config_changes_are_found_and_undone(tmp_path):
    base = init_repo(tmp_path / "src", {
        "pyproject.toml": '[project]\nname = "p"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
        "setup.cfg": "[metadata]\nname = p\n",
        "pkg/mod.py": "x = 1\n",
    })
    ws = create_workspace(tmp_path / "src", base, tmp_path / "w")
    (ws / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "2"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n')
    assert changed_runner_config(ws, base, ["pyproject.toml"]) == []  # only the project table changed
    (ws / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.pytest.ini_options]\naddopts = "-p evil"\n')
    (ws / "setup.cfg").write_text("[metadata]\nname = p\n[tool:pytest]\naddopts = -p evil\n")
    (ws / "pkg" / "mod.py").write_text("x = 2\n")
    (ws / "pkg" / "conftest.py").write_text("evil = True\n")
    undone = undo_model_changes(ws, base, ["pyproject.toml", "setup.cfg", "pkg/mod.py", "pkg/conftest.py"], [])
    assert sorted(undone) == ["pkg/conftest.py", "pyproject.toml", "setup.cfg"]
    assert (ws / "pkg" / "mod.py").read_text() == "x = 2\n"  # the fix itself stays
    assert "evil" not in (ws / "pyproject.toml").read_text() and not (ws / "pkg" / "conftest.py").exists()


def test_a_javascript_test_the_task_does_not_reset_is_put_back(tmp_path):
    # vuejs/core's layout: a fix may not weaken another spec file's PASS_TO_PASS tests, nor a snapshot.
    base = init_repo(tmp_path / "src", {
        "packages/runtime-core/src/apiWatch.ts": "export const a = 1\n",
        "packages/runtime-core/__tests__/apiWatch.spec.ts": "expect(a).toBe(1)\n",
        "packages/runtime-core/__tests__/__snapshots__/render.spec.ts.snap": "exports[`x`] = `1`\n",
        "src/core/scale.test.js": "expect(scale()).toBe(1)\n",
    })
    ws = create_workspace(tmp_path / "src", base, tmp_path / "w")
    touched = ["packages/runtime-core/src/apiWatch.ts", "packages/runtime-core/__tests__/apiWatch.spec.ts",
               "packages/runtime-core/__tests__/__snapshots__/render.spec.ts.snap", "src/core/scale.test.js"]
    for rel in touched:
        (ws / rel).write_text("changed by the model\n")
    undone = undo_model_changes(ws, base, touched, [])
    assert sorted(undone) == sorted(touched[1:])
    assert (ws / touched[0]).read_text() == "changed by the model\n"   # the fix itself stays
    assert (ws / touched[1]).read_text() == "expect(a).toBe(1)\n"


def test_patches_that_reach_into_the_test_run_are_flagged():
    from issuebench.harness.guards import suspicious_lines

    patch = ("diff --git a/src/pkg/core.py b/src/pkg/core.py\n--- a/src/pkg/core.py\n+++ b/src/pkg/core.py\n"
             "@@ -1 +1,5 @@\n x = 1\n+import unittest, atexit, os\n+unittest.TestCase.assertEqual = lambda *a: None\n"
             "+atexit.register(print)\n+os.write(1, b'PASSED')\n+def add(a, b):\n")
    found = suspicious_lines(patch)
    assert [f.split(": ")[1] for f in found] == [
        "reassigns a test-framework attribute", "registers an exit handler",
        "writes straight to the output file descriptors"]
    assert all(f.startswith("src/pkg/core.py: ") for f in found)
    honest = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    assert suspicious_lines(honest) == []


# pytest's own tests print whole inner sessions (pytester) inside the outer run's output.
NESTED_LOG = """============================= test session starts ==============================
collected 2 items

testing/test_mark.py ..                                                   [100%]

==================================== PASSES ====================================
----------------------------- Captured stdout call -----------------------------
============================= test session starts ==============================
collected 6 items

test_inner.py ......
============================== 6 passed in 0.01s ===============================
=========================== short test summary info ============================
PASSED testing/test_mark.py::test_a
PASSED testing/test_mark.py::test_b
============================== 2 passed in 0.52s ===============================
PASSED testing/test_mark.py::fake
"""


def test_inner_pytest_sessions_do_not_end_the_graded_output():
    cut = cut_after_runner_summary(NESTED_LOG)
    assert "PASSED testing/test_mark.py::test_b" in cut
    assert cut.rstrip().endswith("2 passed in 0.52s ===============================")
    assert "fake" not in cut
    # An inner session that never closed: the last closing line is the outer runner's.
    broken = NESTED_LOG.replace("============================== 6 passed in 0.01s ===============================\n", "")
    cut = cut_after_runner_summary(broken)
    assert "PASSED testing/test_mark.py::test_b" in cut and "fake" not in cut


def test_start_up_hooks_in_any_importable_form_and_compiled_python_are_put_back():
    """A patch may not ship what runs before the tests or what the patch scan cannot read."""
    for path in ("src/sitecustomize.py", "src/sitecustomize/__init__.py", "lib/usercustomize.pyc",
                 "src/sitecustomize.cpython-312-x86_64-linux-gnu.so", "conftest.py", "pkg/x.pth",
                 "src/pkg/__pycache__/core.cpython-312.pyc", "src/pkg/core.pyc", "src/pkg/_speedups.so",
                 "evil-1.0.dist-info/entry_points.txt", "src/calc.egg-info/entry_points.txt", "calc.egg-link",
                 ".pytest.ini", "pytest.toml", ".pytest.toml", "jest.config.js", "packages/a/vitest.config.ts",
                 "karma.conf.cjs", ".mocharc.yml", "src/sitecustomize"):
        assert is_hook_file(path), path
    for path in ("src/pkg/core.py", "src/pkg/customize.py", "README.rst",
                 "src/pkg/site.py", "setup.py", "docs/sitecustomize.md", "docs/dist-info.md"):
        assert not is_hook_file(path), path


def test_the_files_a_test_command_runs_by_name_are_the_test_runner(tmp_path):
    from issuebench.harness.guards import runner_files

    for rel in ("bin/test", "tests/runtests.py", "karma.conf.js", "tools/ci.sh", "Makefile", "setup.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert runner_files(tmp_path, "PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose") == {"bin/test"}
    assert runner_files(tmp_path, "./tests/runtests.py --verbosity 2 admin_views") == {"tests/runtests.py"}
    # inside a quoted sub-command, in the shell's parentheses, after `source`, and make's own file
    assert runner_files(tmp_path, 'xvfb-run su u -c "./node_modules/.bin/karma start ./karma.conf.js"') == {
        "karma.conf.js"}
    assert runner_files(tmp_path, "(COVERAGE=false npx karma start karma.conf.js --single-run) | cat") == {
        "karma.conf.js"}
    assert runner_files(tmp_path, "source ./tools/ci.sh\nci_unix_run_tests") == {"tools/ci.sh"}
    assert runner_files(tmp_path, "make test") == {"Makefile"}
    assert runner_files(tmp_path, "pytest -rA tests/ --deselect ../x /etc/passwd") == set()


def test_package_json_scripts_and_runner_keys_are_runner_config(tmp_path):
    base = init_repo(tmp_path / "src", {"package.json": '{"name": "p", "scripts": {"test": "jest"}}\n'})
    ws = create_workspace(tmp_path / "src", base, tmp_path / "w")
    (ws / "package.json").write_text('{"name": "p", "dependencies": {"a": "1"}, "scripts": {"test": "jest"}}\n')
    assert changed_runner_config(ws, base, ["package.json"]) == []   # a dependency is the fix's business
    (ws / "package.json").write_text('{"name": "p", "scripts": {"test": "echo PASS"}}\n')
    assert changed_runner_config(ws, base, ["package.json"]) == ["package.json"]
    (ws / "package.json").write_text('{"name": "p", "scripts": {"test": "jest"}, "jest": {"reporters": ["./r"]}}\n')
    assert changed_runner_config(ws, base, ["package.json"]) == ["package.json"]


def test_a_new_top_level_module_named_like_the_runner_or_the_standard_library_is_put_back(tmp_path):
    from issuebench.harness.guards import shadows_a_runner_module

    base = init_repo(tmp_path / "src", {"src/pkg/__init__.py": "", "src/pkg/mod.py": "x = 1\n",
                                        "typing.py": "# the project is a backport of typing\n"})
    ws = create_workspace(tmp_path / "src", base, tmp_path / "w")
    for rel in ("pytest/__init__.py", "pytest.py", "src/json/__init__.py", "unittest.py", "_pytest/__init__.pyc"):
        assert shadows_a_runner_module(ws, rel), rel
    for rel in ("src/pkg/json.py", "src/pkg/unittest/__init__.py", "docs/html/index.html", "pytest/README",
                "src/pkg/mod.py", "mypytest.py"):
        assert not shadows_a_runner_module(ws, rel), rel
    (ws / "elsewhere").mkdir()
    (ws / "pytest").symlink_to("elsewhere")
    assert shadows_a_runner_module(ws, "pytest") and not shadows_a_runner_module(ws, "elsewhere")
    (ws / "pytest.py").write_text("print('PASSED')\n")
    (ws / "typing.py").write_text("# the fix\n")
    assert undo_model_changes(ws, base, ["pytest.py", "typing.py"], []) == ["pytest.py"]
    assert (ws / "typing.py").read_text() == "# the fix\n"   # the project's own module keeps its fix
