"""A task's test targets as its runner can take them.

The harness passes a test patch's files to the test command the way the reference does, leaving
out only a few data suffixes. A Python suite whose fixtures are other files (chardet's
`tests/UTF-32LE/plane1-utf-32le.html`, which its test.py turns into test cases) then hands pytest
a path it cannot collect: `ERROR: not found`, nothing runs, and the task is refused for a run
that never happened; so do a test module the patch deletes (vulture's move of
`tests/test_unreachable.py` into a new module) and a patch that changes only a `conftest.py`.
A row made here names its targets itself instead: the test modules among the files that remain,
or none (the whole suite, as the runner's configuration finds it).
"""

from __future__ import annotations

import re
import shlex

from issuebench.harness import test_targets
from issuebench.models import EnvSpec
from issuebench.patch import PatchParseError, parse_patch

_PYTHON_MODULE = ".py"
# Python files that hold no tests of their own: handed only these (sqlparse's conftest-only test
# patch), pytest collects nothing; the tests that use them are elsewhere in the suite.
_NEVER_TEST_MODULES = frozenset({"conftest.py", "__init__.py"})
# A Python file in a data folder, not named as a test module is, is an input of the suite's own
# data-driven tests (pycodestyle's `testing/data/python313.py`, which its tests/test_data.py checks
# line by line): handed to pytest as a module, it fails to import or holds no test.
_DATA_FOLDERS = frozenset({"data", "testdata", "test_data", "fixtures", "samples", "cases", "inputs", "snippets"})
_TEST_MODULE_NAME = re.compile(r"^(test_.*|.*_test|tests?)\.py$")


def with_runnable_targets(spec: EnvSpec, test_patch: str) -> EnvSpec:
    """spec, or a copy whose command names only the test modules of the patch (directives off)
    when the patch's targets include a file a Python test runner cannot collect."""
    if spec.kind != "python" or spec.test_directives != "paths":
        return spec
    targets = test_targets(spec, test_patch)
    deleted = _deleted_files(test_patch)
    modules = [t for t in targets if t.endswith(_PYTHON_MODULE) and t not in deleted
               and t.rsplit("/", 1)[-1] not in _NEVER_TEST_MODULES and not _data_file(t)]
    if modules == targets:
        return spec
    command = " ".join([spec.test_cmd, *(shlex.quote(m) for m in modules)])
    note = "validate: the test patch's data files and deleted files are not test targets: " + (
        "its test modules run" if modules else "the whole suite runs")
    return spec.model_copy(update={"test_cmd": command, "test_directives": "none",
                                   "notes": [*spec.notes, note]})


def _data_file(path: str) -> bool:
    *folders, name = path.split("/")
    return not _TEST_MODULE_NAME.match(name) and any(f.lower() in _DATA_FOLDERS for f in folders)


def _deleted_files(test_patch: str) -> set[str]:
    try:
        return {f.path_old for f in parse_patch(test_patch) if f.is_deleted and f.path_old}
    except PatchParseError:
        return set()   # an unreadable patch fails to apply later, with its own reason
