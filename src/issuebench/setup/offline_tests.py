"""Which failing tests failed only for want of the internet, or of a server program the machine lacks.

The sandbox never gives the network, so a test that fetches a URL fails in every environment
setup could build: its failure says nothing about the environment. A test counts as such only when
its own failure report (pytest's section under FAILURES or ERRORS, unittest's block after
`FAIL:`/`ERROR:`) shows the network signature of `data/diagnose.toml` (`needs_network`); a test
whose report is missing (a run cut by the timeout, `--tb=no`) stays an ordinary failure.
Likewise a test whose report says a program of `data/server_programs.toml` is absent (cachelib's
conftest starts `redis-server` and `memcached`), when this machine has no such program: no
environment gives it, installing the Debian package the table names does. And a test whose report
says the locale it sets is not on the machine (natsort's fixtures set de_DE.UTF-8 and en_US.UTF-8;
a machine that generated only C.UTF-8 refuses them): no environment gives a locale either.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Iterator
from typing import Any

from issuebench.parsers import strip_ansi
from issuebench.setup.data import load
from issuebench.setup.log_regex import compile_log_pattern

# A long name leaves room for one underscore each side; `_ _ _` lines split a traceback's frames
# (a name never starts with `_ `). RE2: these run over the whole log.
_PYTEST_HEADER = compile_log_pattern(
    r"^_+ (?:(?:ERROR|FAILURE) at (?:setup|teardown) of )?(?P<name>(?:[^\s_]|_\S).*?) _+$")
_PYTEST_END = compile_log_pattern(r"^(={3,} .*={3,}|-{3,} .*-{3,})$")
# A report with its captured output (`--- Captured stderr call ---`: where a shell says a program is
# not found), up to the next `===` section (the short summary, whose lines name other tests).
_PYTEST_SECTION_END = compile_log_pattern(r"^={3,} .*={3,}$")
# CPython's own words when setlocale asks for a locale the system has not generated.
_LOCALE_MISSING = compile_log_pattern(r"locale\.Error: unsupported locale setting")
_UNITTEST_HEADER = compile_log_pattern(r"^(?:FAIL|ERROR): (?P<name>\S.*)$")
_UNITTEST_END = compile_log_pattern(r"^(={20,}|-{20,}\nRan \d+ tests?)")


@functools.cache
def _network(in_output: bool = False) -> Any:
    """The network signatures; `in_output`: those also read in a test's captured output (where
    a program it ran wrote them), not in its traceback alone."""
    regexes = [p["regex"] for p in load("diagnose")["pattern"]
               if p["kind"] == "needs_network" and (not in_output or p.get("in_output"))]
    return compile_log_pattern("|".join(f"(?:{r})" for r in regexes))


@functools.cache
def _server_programs() -> dict[str, str]:
    return dict(load("server_programs")["programs"])


@functools.cache
def _absent_program() -> Any:
    """A program of the table said to be absent, in group `program` (or `shell`, from a shell)."""
    names = "|".join(re.escape(name) for name in _server_programs())
    return compile_log_pattern(rf"No such file or directory: '(?P<program>{names})'"
                               rf"|(?P<shell>{names}): (?:command )?not found")


def _on_this_machine(program: str) -> bool:
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/local/sbin", "/usr/sbin", "/sbin"])
    return shutil.which(program, path=path) is not None


def offline_failures(log: str, failing: list[str]) -> list[str]:
    """The tests among `failing` whose own failure report shows a network fault, and those that
    failed at the setup of the same fixture with the same error: pytest prints what a
    session-wide fixture wrote (`Cannot connect to the Docker daemon`) under the first test that
    asked for it only, and the same exception under every later one."""
    log = strip_ansi(log)   # a suite's own `--color=yes` (python-can's addopts) wraps report headers
    shown = set(_failures_showing(log, failing, _network(), _PYTEST_END)) | \
        set(_failures_showing(log, failing, _network(in_output=True), _PYTEST_SECTION_END))
    rest = [t for t in failing if t not in shown]
    if shown and rest:
        errors = _setup_errors(log)
        offline = {errors[n] for t in shown for n in _report_names(t) if n in errors}
        shown |= {t for t in rest if any(errors.get(n) in offline for n in _report_names(t))}
    return [t for t in failing if t in shown]


_ERROR_LINE = compile_log_pattern(r"^E\s+(\S.*)$")


def _setup_errors(log: str) -> dict[str, str]:
    """Report name -> the last `E` line of each pytest `ERROR at setup of` report."""
    out: dict[str, str] = {}
    for head, body in _report_bodies(log, _PYTEST_HEADER, _PYTEST_END):
        lines = [m.group(1) for m in _ERROR_LINE.finditer(body)]
        if " at setup of " in head.group(0) and lines:
            out.update(dict.fromkeys(_header_names(head.group("name").strip()), lines[-1]))
    return out


def program_failures(log: str, failing: list[str]) -> dict[str, str]:
    """test -> the absent server program its own failure report names (one this machine lacks)."""
    log = strip_ansi(log)
    if not failing or not _absent_program().search(log):
        return {}
    programs = {name: program for name, program in _reports(log, _absent_program(), _PYTEST_SECTION_END)
                if not _on_this_machine(program)}
    found = {}
    for test in failing:
        program = next((programs[n] for n in _report_names(test) if n in programs), None)
        if program is not None:
            found[test] = program
    return found


def locale_failures(log: str, failing: list[str]) -> list[str]:
    """The tests among `failing` whose own failure report says the locale they set is not on this
    machine."""
    return _failures_showing(strip_ansi(log), failing, _LOCALE_MISSING, _PYTEST_SECTION_END)


def _failures_showing(log: str, failing: list[str], signature: Any, pytest_end: Any) -> list[str]:
    """The tests among `failing` whose own failure report shows `signature`."""
    if not failing or not signature.search(log):
        return []
    shown = {name for name, _ in _reports(log, signature, pytest_end)}
    return [test for test in failing if _report_names(test) & shown]


def debian_package(program: str) -> str:
    """The Debian package that brings a program of `data/server_programs.toml`."""
    return _server_programs()[program]


def _reports(log: str, signature: Any, pytest_end: Any = _PYTEST_END) -> list[tuple[str, str]]:
    """(name, the signature's last matched group or "") of each failure report, pytest's and
    unittest's (a header and the text up to the next header or section end), that shows `signature`."""
    return _reports_of(log, _PYTEST_HEADER, pytest_end, signature) + \
        _reports_of(log, _UNITTEST_HEADER, _UNITTEST_END, signature)


def _report_bodies(log: str, header: Any, end: Any) -> Iterator[tuple[Any, str]]:
    """(header match, the report's own text) of each failure report: from its header to the next
    header, cut at the section end (RE2 reads the whole text it is given at each call, so each
    report's slice is searched on its own)."""
    heads = list(header.finditer(log))
    for i, head in enumerate(heads):
        body = log[head.end():heads[i + 1].start() if i + 1 < len(heads) else len(log)]
        closing = end.search(body)
        yield head, body[:closing.start()] if closing else body


def _reports_of(log: str, header: Any, end: Any, signature: Any) -> list[tuple[str, str]]:
    found = []
    for head, body in _report_bodies(log, header, end):
        match = signature.search(body)
        if match:
            groups = [g for g in match.groups() if g]
            found += [(name, groups[-1] if groups else "") for name in _header_names(head.group("name").strip())]
    return found


_UNITTEST_NAME = compile_log_pattern(r"^(?P<method>\w+) \((?P<where>[\w.]+)\)", multiline=False)


def _header_names(header: str) -> set[str]:
    """A report header and, for unittest's `test_x (module.Class)` (or, from Python 3.11 on,
    `test_x (module.Class.test_x)`), the dotted id the unittest parser keeps."""
    names = {header}
    if header.startswith("ERROR collecting "):
        # A module that failed to import: pytest's id for it is the file's path.
        names.add(header[len("ERROR collecting "):])
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
