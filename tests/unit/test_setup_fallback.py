"""eval/validate --setup-fallback: a task whose recipe fails gets the recipe setup found for its
repository version, remembered per version; without the option nothing changes."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from issuebench.errors import IssuebenchError
from issuebench.harness.recipe_fallback import env_for_task, other_recipe
from issuebench.models import EnvSpec, Task
from issuebench.setup import fallback
from tests.gitrepo import init_repo

TASK = Task(instance_id="o__r-1", repo="o/r", base_commit="a" * 40, problem_statement="", patch="",
            test_patch="", FAIL_TO_PASS=[], PASS_TO_PASS=[], version="1.0", created_at="2021-01-01T00:00:00Z")
GOOD = EnvSpec(python="3.9", packages=["pytest"], test_cmd="pytest -rA")
BROKEN = EnvSpec(python="3.9", packages=["no-such-thing==0"])


class _Builder:
    root = None

    def __init__(self) -> None:
        self.built: list[list[str]] = []

    def ensure(self, spec: EnvSpec, ws: Path) -> SimpleNamespace:
        if "no-such-thing==0" in spec.packages:
            raise IssuebenchError("environment failed to build: no-such-thing==0 is not available")
        self.built.append(spec.packages)
        (ws.parent / "env").mkdir(exist_ok=True)
        return SimpleNamespace(path=ws.parent / "env", env_hash=spec.env_hash())


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    init_repo(tmp_path / "ws", {"a.py": "x = 1\n"})
    return tmp_path / "ws"


def _remember(entry: dict) -> None:
    store = fallback._store()
    (store / f"{fallback._key(TASK)}.json").write_text(json.dumps(entry))


def test_a_recipe_that_fails_to_build_falls_back_to_the_remembered_setup(ws: Path) -> None:
    _remember({"accepted": True, "commit": "b" * 40, "env": GOOD.model_dump(mode="json"),
               "tests_run": 10, "tests_passed": 10})
    builder = _Builder()
    ctx = SimpleNamespace(setup_fallback=fallback.fallback_spec, backend="local", env_builder=builder, sandbox=None,
                          repos_dir=None, allow_clone=False)
    spec, env = env_for_task(TASK, ctx, ws, BROKEN, ws)
    assert env.env_hash == spec.env_hash()
    assert spec.packages == ["pytest"] and builder.built == [["pytest"]]
    assert spec.notes[-1] == "setup fallback: recipe set up from bbbbbbbbbbbb (10/10 tests passed there)"
    # A task without any recipe gets the same remembered recipe, with no search.
    assert other_recipe(TASK, ctx, ws, "no environment recipe").packages == ["pytest"]


def test_without_the_option_or_with_a_remembered_failure_the_build_error_stands(ws: Path) -> None:
    builder = _Builder()
    off = SimpleNamespace(setup_fallback=None, backend="local", env_builder=builder, sandbox=None)
    with pytest.raises(IssuebenchError, match="no-such-thing"):
        env_for_task(TASK, off, ws, BROKEN, ws)
    assert other_recipe(TASK, off, ws, "no environment recipe") is None
    _remember({"accepted": False, "commit": "b" * 40, "reason": "best attempt passed 1/9 tests"})
    on = SimpleNamespace(setup_fallback=fallback.fallback_spec, backend="local", env_builder=builder, sandbox=None)
    with pytest.raises(IssuebenchError, match="no-such-thing"):
        env_for_task(TASK, on, ws, BROKEN, ws)
    spec, note = fallback.fallback_spec(TASK, ws)
    assert spec is None and note == "setup fallback: no recipe for o/r 1.0 (best attempt passed 1/9 tests)"


def _run(output: str, statuses: dict[str, str] | None = None, returncode: int = 1):
    from issuebench.models import InstanceStatus, TestStatus

    status_map = {k: TestStatus(v) for k, v in (statuses or {}).items()}
    return SimpleNamespace(status=InstanceStatus.UNRESOLVED if status_map else InstanceStatus.LOG_UNPARSEABLE,
                           status_map=status_map, output=output, returncode=returncode)


GOLD_ADDS = Task(**{**TASK.model_dump(), "patch": (
    "diff --git a/pkg/newmod.py b/pkg/newmod.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/newmod.py\n"
    "@@ -0,0 +1 @@\n+X = 1\n")})


@pytest.mark.parametrize(("output", "statuses", "returncode", "fault"), [
    # The environment's fault: a dependency, the project itself, the runner, a dependency's version.
    ("E   ModuleNotFoundError: No module named 'six'", {"tests/test_a.py": "ERROR"}, 2, "No module named 'six'"),
    ("/x/bin/python: No module named pytest", None, 1, "No module named 'pytest'"),
    ("bash: line 1: pytest: command not found", None, 127, "pytest: command not found"),
    ("ImportError: cannot import name 'Mapping' from 'collections.abc' (/e/lib/site-packages/x/__init__.py)",
     None, 2, "cannot import name 'Mapping' from the installed collections.abc"),
    # Not the environment's: the gold creates the module, the name is the project's own, a test passed.
    ("ModuleNotFoundError: No module named 'pkg.newmod'", {"tests/test_a.py": "ERROR"}, 2, None),
    ("ImportError: cannot import name 'new_fn' from 'pkg' (/tmp/testbed/pkg/__init__.py)", None, 2, None),
    ("ImportError: cannot import name 'new_fn' from 'pkg' (/e/lib/site-packages/pkg/__init__.py)", None, 2, None),
    ("ModuleNotFoundError: No module named 'six'", {"tests/test_a.py::t": "PASSED"}, 1, None),
])
def test_which_runs_say_the_environment_cannot_run_the_tests(output, statuses, returncode, fault) -> None:
    from issuebench.harness.tests_fallback import env_fault

    assert env_fault(_run(output, statuses, returncode), GOLD_ADDS) == fault
