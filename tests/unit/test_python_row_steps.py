"""A Python row's own steps between its test patch and its tests: an install of named packages is
built into the environment, an export is a run-time variable, anything else is left out, said."""

from __future__ import annotations

from issuebench.harness.python_row_steps import row_steps, with_python_row_steps
from issuebench.models import EnvSpec, Task

# The shape of a reference eval_script for a Python row (5.x format), with the instance's own steps.
SCRIPT = """\
#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git -c core.fileMode=false diff 0123456789abcdef
python -m pip install -e .[test] --verbose
git checkout 0123456789abcdef pkg/tests/test_a.py
git apply -v - <<'EOF_0001'
diff --git a/pkg/tests/test_a.py b/pkg/tests/test_a.py
--- a/pkg/tests/test_a.py
+++ b/pkg/tests/test_a.py
@@ -1 +1 @@
-export NOT_A_STEP=1
+python -m pip install not-a-step
EOF_0001
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -q 'pytest<7.2'
export SETUPTOOLS_USE_DISTUTILS=stdlib
make docs
: '>>>>> Start Test Output'
pytest -rA pkg/tests/test_a.py
: '>>>>> End Test Output'
git checkout 0123456789abcdef pkg/tests/test_a.py
"""


def _task(script: str | None) -> Task:
    return Task(instance_id="o__r-1", repo="o/r", base_commit="0" * 40, patch="", test_patch="",
                problem_statement="", version="1.0", FAIL_TO_PASS=[], PASS_TO_PASS=[], eval_script=script)


def test_only_the_lines_between_the_test_patch_and_the_tests_are_the_rows_steps() -> None:
    assert row_steps(SCRIPT) == ["python -m pip install -q 'pytest<7.2'", "export SETUPTOOLS_USE_DISTUTILS=stdlib",
                                 "make docs"]
    assert row_steps(None) == [] and row_steps("pytest -rA\n") == []


def test_an_install_replaces_the_recipes_entry_and_an_export_is_a_run_variable() -> None:
    spec = EnvSpec(python="3.9", packages=["numpy==1.25.2", "pytest==7.4.0"], test_cmd="pytest -rA")
    honoured = with_python_row_steps(_task(SCRIPT), spec)
    assert honoured.packages == ["numpy==1.25.2", "pytest<7.2"]
    assert honoured.env_vars == {"SETUPTOOLS_USE_DISTUTILS": "stdlib"}
    # Built before any test runs: an environment of its own, never an install in the test run.
    assert honoured.env_hash() != spec.env_hash() and honoured.pre_test == spec.pre_test
    assert any("left out `make docs`" in note for note in honoured.notes)
    assert any("`export SETUPTOOLS_USE_DISTUTILS=stdlib` set for the test run" in n for n in honoured.notes)


def test_rows_without_steps_and_rows_that_bring_their_own_commands_are_left_as_they_are() -> None:
    spec = EnvSpec(python="3.9", packages=["pytest==7.4.0"])
    plain = SCRIPT.replace("python -m pip install -q 'pytest<7.2'\nexport SETUPTOOLS_USE_DISTUTILS=stdlib\n"
                           "make docs\n", "")
    assert with_python_row_steps(_task(plain), spec) == spec
    assert with_python_row_steps(_task(None), spec) == spec
    from_row = spec.model_copy(update={"commands_from": "row"})
    assert with_python_row_steps(_task(SCRIPT), from_row) == from_row
