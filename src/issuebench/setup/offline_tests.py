"""Which failing tests failed only for want of the internet.

The sandbox never gives the network, so a test that fetches a URL fails in every environment
setup could build: its failure says nothing about the environment. A test counts as such only when
its own failure report (pytest's section under FAILURES or ERRORS, unittest's block after
`FAIL:`/`ERROR:`) shows the network signature of `data/diagnose.toml` (`needs_network`); a test
whose report is missing (a run cut by the timeout, `--tb=no`) stays an ordinary failure.
"""

from __future__ import annotations

import functools
from typing import Any

from issuebench.setup.data import load
from issuebench.setup.log_regex import compile_log_pattern

# A long name leaves room for one underscore each side; `_ _ _` lines split a traceback's frames
# (a name never starts with `_ `). RE2: these run over the whole log.
_PYTEST_HEADER = compile_log_pattern(
    r"^_+ (?:(?:ERROR|FAILURE) at (?:setup|teardown) of )?(?P<name>(?:[^\s_]|_\S).*?) _+$")
_PYTEST_END = compile_log_pattern(r"^(={3,} .*={3,}|-{3,} .*-{3,})$")
_UNITTEST_HEADER = compile_log_pattern(r"^(?:FAIL|ERROR): (?P<name>\S.*)$")
_UNITTEST_END = compile_log_pattern(r"^(={20,}|-{20,}\nRan \d+ tests?)")


@functools.cache
def _network() -> Any:
    regexes = [p["regex"] for p in load("diagnose")["pattern"] if p["kind"] == "needs_network"]
    return compile_log_pattern("|".join(f"(?:{r})" for r in regexes))


def offline_failures(log: str, failing: list[str]) -> list[str]:
    """The tests among `failing` whose own failure report shows a network fault."""
    if not failing or not _network().search(log):
        return []
    cut_off = _reports(log, _PYTEST_HEADER, _PYTEST_END) | _reports(log, _UNITTEST_HEADER, _UNITTEST_END)
    return [test for test in failing if _report_names(test) & cut_off]


def _reports(log: str, header: Any, end: Any) -> set[str]:
    """Names of the reports (a header and the text up to the next header or section end) that
    show the network signature."""
    heads = list(header.finditer(log))
    names = set()
    for i, head in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(log)
        # The report's own slice is searched (RE2 reads the whole text it is given at each call).
        body = log[head.end():stop]
        closing = end.search(body)
        body = body[:closing.start()] if closing else body
        if _network().search(body):
            names |= _header_names(head.group("name").strip())
    return names


_UNITTEST_NAME = compile_log_pattern(r"^(?P<method>\w+) \((?P<where>[\w.]+)\)", multiline=False)


def _header_names(header: str) -> set[str]:
    """A report header and, for unittest's `test_x (module.Class)` (or, from Python 3.11 on,
    `test_x (module.Class.test_x)`), the dotted id the unittest parser keeps."""
    names = {header}
    match = _UNITTEST_NAME.match(header)
    if match:
        method, where = match.group("method"), match.group("where")
        names.add(where if where.endswith("." + method) else f"{where}.{method}")
    return names


def _report_names(test_id: str) -> set[str]:
    """How a report heads this test: pytest shows the id past its file with `::` as dots
    (`Class.test_name[param]`, or the function alone at module level; pytest 2 ids carry it after
    the file and line); unittest the id as the parser keeps it."""
    names = {test_id}
    if "::" in test_id:
        names.add(test_id.split("::", 1)[1].replace("::", "."))
    located = _LOCATED_ID.match(test_id)
    if located:
        names.add(located.group("name"))
    return names


# pytest 2's verbose ids: `test_requests.py:106: RequestsTestCase.test_get`
_LOCATED_ID = compile_log_pattern(r"^\S+:\d+: (?P<name>\S+)$", multiline=False)
