"""A task's test targets as its runner can take them.

The harness passes a test patch's files to the test command the way the reference does, leaving
out only a few data suffixes. A Python suite whose fixtures are other files (chardet's
`tests/UTF-32LE/plane1-utf-32le.html`, which its test.py turns into test cases) then hands pytest
a path it cannot collect: `ERROR: not found`, nothing runs, and the task is refused for a run
that never happened; so do a test module the patch deletes (vulture's move of
`tests/test_unreachable.py` into a new module) and a patch that changes only a `conftest.py`.
A row made here names its targets itself instead: the test modules among the files that remain,
or none (the whole suite, as the runner's configuration finds it).

A JavaScript suite is given the same care where the project's `scripts.test` hands its runner
paths (terser: `node test/compress.js && mocha test/mocha`): a test patch's files elsewhere
(`test/compress/*.js`, inputs that test/compress.js reads) are not the runner's, and mocha, handed
one, stops before any test. Only the files under those paths are targets, or those paths alone.
For jest and vitest, which take only files named as tests, a target must be one (`x.test.js`,
`__tests__/`), else the whole suite runs.
"""

from __future__ import annotations

import fnmatch
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
_JS_TEST_FILE = re.compile(r"(^|/)__tests__/|[._-](test|spec)\.[cm]?[jt]sx?$")
_TEST_MODULE_NAME = re.compile(r"^(test_.*|.*_test|tests?)\.py$")


def with_runnable_targets(spec: EnvSpec, test_patch: str, suite: list[str] | None = None) -> EnvSpec:
    """spec, or a copy whose command names only the test files of the patch its runner can take
    (directives off): for Python, when the patch's targets include a file pytest cannot collect;
    for Node, when some lie outside `suite`, the paths the project's scripts.test gives its runner."""
    if spec.test_directives != "paths" or spec.kind not in ("python", "node"):
        return spec
    targets = test_targets(spec, test_patch)
    deleted = _deleted_files(test_patch)
    if spec.kind == "node":
        # jest and vitest take only files named as tests; handed a helper (xmldom's
        # test/grammar/regexp.js, which its regexp.test.js reads), jest matches nothing and fails.
        named = _JS_TEST_FILE if spec.log_parser in ("jest", "vitest") else None
        runnable = [t for t in targets if t not in deleted and (not suite or _under_any(t, suite))
                    and (named is None or named.search(t))]
        fallback = suite or []
    else:
        runnable = [t for t in targets if t.endswith(_PYTHON_MODULE) and t not in deleted
                    and t.rsplit("/", 1)[-1] not in _NEVER_TEST_MODULES and not _data_file(t)]
        fallback = []
    if runnable == targets and (runnable or not fallback):
        return spec
    command = " ".join([spec.test_cmd, *(shlex.quote(m) for m in runnable or fallback)])
    note = "validate: the test patch's data files and deleted files are not test targets: " + (
        "its test files run" if runnable else "the whole suite runs")
    return spec.model_copy(update={"test_cmd": command, "test_directives": "none",
                                   "notes": [*spec.notes, note]})


def _under_any(path: str, suite: list[str]) -> bool:
    """Whether `path` is one of the suite's paths, lies under one, or matches one that is a glob."""
    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/")
               or ("*" in p and fnmatch.fnmatch(path, p)) for p in suite)


def _data_file(path: str) -> bool:
    *folders, name = path.split("/")
    return not _TEST_MODULE_NAME.match(name) and any(f.lower() in _DATA_FOLDERS for f in folders)


def _deleted_files(test_patch: str) -> set[str]:
    try:
        return {f.path_old for f in parse_patch(test_patch) if f.is_deleted and f.path_old}
    except PatchParseError:
        return set()   # an unreadable patch fails to apply later, with its own reason
