"""Which failing tests failed only for want of the internet.

The sandbox never gives the network, so a test that fetches a URL fails in every environment
setup could build: its failure says nothing about the environment. A test counts as such only when
its own failure report (pytest's section under FAILURES or ERRORS, unittest's block after
`FAIL:`/`ERROR:`) shows the network signature of `data/diagnose.toml` (`needs_network`); a test
whose report is missing (a run cut by the timeout, `--tb=no`) stays an ordinary failure.
"""

from __future__ import annotations

import functools
import re

from issuebench.setup.data import load

# A long name leaves room for one underscore each side; `_ _ _` lines split a traceback's frames.
_PYTEST_HEADER = re.compile(r"^_+ (?:(?:ERROR|FAILURE) at (?:setup|teardown) of )?(?P<name>(?!_ )\S.*?) _+$",
                            re.MULTILINE)
_PYTEST_END = re.compile(r"^(={3,} .*={3,}|-{3,} .*-{3,})$", re.MULTILINE)
_UNITTEST_HEADER = re.compile(r"^(?:FAIL|ERROR): (?P<name>\S.*)$", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(={20,}|-{20,}\nRan \d+ tests?)", re.MULTILINE)


@functools.cache
def _network() -> re.Pattern[str]:
    regexes = [p["regex"] for p in load("diagnose")["pattern"] if p["kind"] == "needs_network"]
    return re.compile("|".join(f"(?:{r})" for r in regexes))


def offline_failures(log: str, failing: list[str]) -> list[str]:
    """The tests among `failing` whose own failure report shows a network fault."""
    if not failing or not _network().search(log):
        return []
    cut_off = _reports(log, _PYTEST_HEADER, _PYTEST_END) | _reports(log, _UNITTEST_HEADER, _UNITTEST_END)
    return [test for test in failing if _report_names(test) & cut_off]


def _reports(log: str, header: re.Pattern[str], end: re.Pattern[str]) -> set[str]:
    """Names of the reports (a header and the text up to the next header or section end) that
    show the network signature."""
    heads = list(header.finditer(log))
    names = set()
    for i, head in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(log)
        closing = end.search(log, head.end(), stop)
        body = log[head.end():closing.start() if closing else stop]
        if _network().search(body):
            names |= _header_names(head.group("name").strip())
    return names


_UNITTEST_NAME = re.compile(r"^(?P<method>\w+) \((?P<where>[\w.]+)\)")


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
_LOCATED_ID = re.compile(r"^\S+:\d+: (?P<name>\S+)$")
