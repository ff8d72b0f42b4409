"""The row's own eval_script: its build steps and test command taken, the rest left to the harness."""

from __future__ import annotations

from issuebench.harness.eval_script import parse_eval_script, with_row_commands
from issuebench.models import EnvSpec, Task

BASE = "e88f6acb94c77c9a5b81f0b2a8bd132b2a5c3d3c"
# The shape of a reference 5.x row's script (redis__redis-10068's, its patch shortened).
REDIS = f"""#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
git status
git show
git -c core.fileMode=false diff {BASE}
git checkout {BASE} tests/unit/type/stream.tcl
git apply -v - <<'EOF_114329324912'
diff --git a/tests/unit/type/stream.tcl b/tests/unit/type/stream.tcl
--- a/tests/unit/type/stream.tcl
+++ b/tests/unit/type/stream.tcl
@@ -1 +1,2 @@
+: '>>>>> Start Test Output'
 make
EOF_114329324912
make distclean
make
: '>>>>> Start Test Output'
(TERM=dumb ./runtest --durable --single unit/type/stream --only "/*XTRIM*") | cat
: '>>>>> End Test Output'
git checkout {BASE} tests/unit/type/stream.tcl
"""

MARKED = """#!/bin/bash
set -uxo pipefail
cd /testbed
source $NVM_DIR/nvm.sh
git status
rm -f test/specs/new/a.html test/specs/new/a.md
git apply -v - <<'EOF_114329324912'
diff --git a/test/specs/new/a.md b/test/specs/new/a.md
EOF_114329324912
if ! git diff --quiet HEAD -- package.json 2>/dev/null; then npm install; fi
: '>>>>> Start Test Output'
xvfb-run su chromeuser -c "./node_modules/.bin/jasmine --no-color --config=jasmine.json"
: '>>>>> End Test Output'
rm -f test/specs/new/a.html test/specs/new/a.md
"""


def test_build_steps_and_test_command_are_read_and_the_patch_and_resets_are_not():
    script = parse_eval_script(REDIS)
    assert script is not None
    # The marker inside the heredoc is patch text, not a marker; the resets are the harness's.
    assert script.build == ["make distclean", "make"]
    assert script.test == ['(TERM=dumb ./runtest --durable --single unit/type/stream --only "/*XTRIM*") | cat']
    assert script.dropped == []


def test_a_line_that_needs_the_network_is_left_out_with_its_reason():
    script = parse_eval_script(MARKED)
    assert script is not None
    assert script.build == []
    assert len(script.dropped) == 1 and "network" in script.dropped[0][1]


def test_a_script_without_markers_gives_nothing():
    assert parse_eval_script("#!/bin/bash\nmake test\n") is None


def test_the_spec_takes_the_rows_commands_only_when_it_says_so():
    task = Task(instance_id="r-1", repo="redis/redis", base_commit=BASE, eval_script=REDIS)
    recipe = EnvSpec(kind="native", commands_from="row", pre_test=["export X=1"])
    spec = with_row_commands(task, recipe)
    assert spec.pre_test == ["export X=1", "make distclean", "make"]
    assert spec.test_cmd.startswith("(TERM=dumb ./runtest") and spec.test_directives == "none"
    # A Python recipe of today keeps its own commands, whatever the row carries.
    assert with_row_commands(task, EnvSpec()) == EnvSpec()


def test_the_recipes_rewrites_apply_and_dropped_lines_are_noted():
    task = Task(instance_id="m-1", repo="markedjs/marked", base_commit=BASE, eval_script=MARKED)
    recipe = EnvSpec(kind="node", commands_from="row", script_rewrites={"su chromeuser -c ": "bash -c "})
    spec = with_row_commands(task, recipe)
    assert spec.test_cmd == 'xvfb-run bash -c "./node_modules/.bin/jasmine --no-color --config=jasmine.json"'
    assert any(n.startswith("eval_script: left out `if ! git diff") for n in spec.notes)
