"""JUnit XML (`pytest --junitxml`, Maven Surefire, `go-junit-report`, ...), found inside a log.

The log may hold other text around the XML and several reports; every `<testsuites>` or
top-level `<testsuite>` element is read. The id is `classname.name` (pytest writes classname as
the dotted module and class, e.g. `tests.test_x.TestY`), or `name` alone without a classname.
A `<skipped type="pytest.xfail">` is an XFAIL; other skips are SKIPPED.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from issuebench.models import TestStatus, TestStatusMap

_REPORT = re.compile(r"<testsuites\b.*?</testsuites>|<testsuite\b.*?</testsuite>", re.DOTALL)


def junit_id(case: ET.Element) -> str:
    name = case.get("name", "")
    classname = case.get("classname")
    return f"{classname}.{name}" if classname else name


def _case_status(case: ET.Element) -> TestStatus:
    if case.find("error") is not None:
        return TestStatus.ERROR
    if case.find("failure") is not None:
        return TestStatus.FAILED
    skipped = case.find("skipped")
    if skipped is not None:
        return TestStatus.XFAIL if skipped.get("type") == "pytest.xfail" else TestStatus.SKIPPED
    return TestStatus.PASSED


def parse_log_junit(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for block in _REPORT.findall(log):
        try:
            root = ET.fromstring(block)
        except ET.ParseError:
            continue  # a truncated or interleaved report: the tests in it count as missing
        for case in root.iter("testcase"):
            result[junit_id(case)] = _case_status(case)
    return result
