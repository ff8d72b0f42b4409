"""Django's own runner (`tests/runtests.py --verbosity 2`), read the way the reference reads it.

Each test prints `name (module.Class) ... ok|FAIL|ERROR|skipped '...'`. When a test has a
docstring, Django prints its first line instead of the name, so dataset ids are sometimes
docstring lines (`--version is equivalent to version`); the ids here are exactly what the
reference produces, because the dataset's FAIL_TO_PASS/PASS_TO_PASS lists were made with it.

Special cases the reference handles and this parser reproduces:
- output printed by a test lands between `...` and `ok`: the `ok` on a later line belongs to
  the last test that printed ` ... `;
- `FAIL: name (module.Class)` / `ERROR: ...` headers of the failure section mark the test;
- three known log lines that Django interleaves before `ok` ("Testing against Django installed
  in ...", "Internal Server Error: /.../", "System check identified no issues (0 silenced)");
- django__django-7188, where a migration message shares the line with the test name.
"""

from __future__ import annotations

import re

from issuebench.models import TestStatus, TestStatusMap

_PASS_SUFFIXES = (" ... ok", " ... OK", " ...  OK")
_VERSION_TEST = "--version is equivalent to version"
_MIGRATION_PREFIX = "Applying sites.0002_alter_domain_unique...test_no_migrations"
# A test's `... ok` cut off by one of Django's multi-line log messages.
_INTERRUPTED_OK = [
    re.compile(r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$",
               re.MULTILINE),
    re.compile(r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$", re.MULTILINE),
    re.compile(r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$", re.MULTILINE),
]


def parse_log_django(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    last_started: str | None = None
    for raw in log.split("\n"):
        line = raw.strip()
        if _VERSION_TEST in line:
            result[_VERSION_TEST] = TestStatus.PASSED
        if " ... " in line:
            last_started = line.split(" ... ")[0]

        for suffix in _PASS_SUFFIXES:
            if line.endswith(suffix):
                if line.startswith(_MIGRATION_PREFIX):
                    line = line.split("...", 1)[-1].strip()
                result[line.rsplit(suffix, 1)[0]] = TestStatus.PASSED
                break
        if " ... skipped" in line:
            result[line.split(" ... skipped")[0]] = TestStatus.SKIPPED
        if line.endswith(" ... FAIL"):
            result[line.split(" ... FAIL")[0]] = TestStatus.FAILED
        if line.startswith("FAIL:") and len(line.split()) > 1:
            result[line.split()[1].strip()] = TestStatus.FAILED
        if line.endswith(" ... ERROR"):
            result[line.split(" ... ERROR")[0]] = TestStatus.ERROR
        if line.startswith("ERROR:") and len(line.split()) > 1:
            result[line.split()[1].strip()] = TestStatus.ERROR
        # The test printed something between `...` and its verdict: `ok` arrives on its own line.
        if line.startswith("ok") and last_started is not None:
            result[last_started] = TestStatus.PASSED

    for pattern in _INTERRUPTED_OK:
        for match in pattern.finditer(log):
            result[match.group(1)] = TestStatus.PASSED
    return result
