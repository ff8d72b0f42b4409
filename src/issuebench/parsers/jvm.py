"""Java build tools of SWE-bench Multilingual: Maven (one run per test), Ant (lombok) and Gradle.

- Maven prints no line per passing test, so the rows run `mvn test -Dtest=Class#method` once per
  test under `set -x`: each traced command line names a test (`-Dtest=<id>`) and each
  `BUILD SUCCESS` / `BUILD FAILURE` that follows, in order, gives its result. Results that come
  before their command line (interleaved output) are paired afterwards, first come first served.
- Ant (lombok's formatter): `[junit] [PASS] name`, `[junit] [FAIL] name`, `[junit] [ERR] name`;
  an error counts as failed, as in the reference.
- Gradle (with the rows' build script that logs every test): `Class > method PASSED` / `FAILED`,
  or the name and the status on two lines when output interleaves. Skipped tests are not
  recorded.
"""

from __future__ import annotations

from issuebench.models import TestStatus, TestStatusMap

_BUILD = {"BUILD SUCCESS": TestStatus.PASSED, "BUILD FAILURE": TestStatus.FAILED}
_ANT = {"[PASS]": TestStatus.PASSED, "[FAIL]": TestStatus.FAILED, "[ERR]": TestStatus.FAILED}
_GRADLE = {"PASSED": TestStatus.PASSED, "FAILED": TestStatus.FAILED}
_DTEST = "-Dtest="


def _maven_test(line: str) -> str | None:
    """The value of the last `-Dtest=` on the line that has one."""
    at = line.rfind(_DTEST)
    while at >= 0:
        start = at + len(_DTEST)
        if start < len(line) and not line[start].isspace():
            end = start
            while end < len(line) and not line[end].isspace():
                end += 1
            return line[start:end]
        at = line.rfind(_DTEST, 0, at)
    return None


def parse_log_maven(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    pending: list[str] = []
    early: list[TestStatus] = []
    for raw in log.split("\n"):
        line = raw.strip()
        test = _maven_test(line)
        if test is not None:
            pending.append(test)
        outcome = next((status for word, status in _BUILD.items() if line.endswith(word)), None)
        if outcome is None:
            continue
        if pending:
            result[pending.pop(0)] = outcome
        else:
            early.append(outcome)
    for test, outcome in zip(pending, early, strict=False):  # the shorter list decides
        result[test] = outcome
    return result


def parse_log_ant(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    for raw in log.split("\n"):
        line = raw.strip()
        if not line.startswith("[junit]"):
            continue
        rest = line[len("[junit]"):]
        tag = rest.lstrip()
        if len(tag) == len(rest):
            continue  # `[junit]` must be followed by whitespace
        for word, status in _ANT.items():
            if tag.startswith(word):
                name = tag[len(word):]
                if name[:1].isspace():
                    result[name.lstrip()] = status
                break
    return result


def _gradle_result(line: str) -> tuple[str, TestStatus] | None:
    """`Class > method PASSED` -> (`Class > method`, PASSED); the name keeps all but one space."""
    word = line[-6:]
    if word in _GRADLE and len(line) >= 9 and line[-7].isspace() and line[0] != ">":
        return line[:-7], _GRADLE[word]
    return None


def _gradle_name(line: str) -> bool:
    """`Class > method` alone on its line (its status follows on a later line)."""
    parts = line.split()
    return len(parts) == 3 and parts[1] == ">" and not parts[0].startswith(">")


def parse_log_gradle_custom(log: str) -> TestStatusMap:
    result: TestStatusMap = {}
    waiting: str | None = None
    for raw in log.split("\n"):
        line = raw.strip()
        found = _gradle_result(line)
        if found is not None:
            result[found[0]] = found[1]
            waiting = None
        elif _gradle_name(line):
            waiting = line
        elif waiting is not None and line in _GRADLE:
            result[waiting] = _GRADLE[line]
            waiting = None
    return result
