"""A suite's own switch for running without the network, turned on.

pip-audit's conftest adds `--skip-online`, which skips every test marked `online` (they query
PyPI and the vulnerability services); its CI, which has the network, never passes it. Without it
those tests wait on each service until the run's limit, and validate refused its tasks for time.
The sandbox never gives the network, so a switch the project offers for that is always on.

A marker the suite declares for such tests is the other switch: scikit-build-core's conftest marks
`network` ("Needs a network connection to setup or run") every test whose fixture builds a wheelhouse
with `pip download`; offline, pip's failure reaches the report only as `CalledProcessError`, and
those ten errors held its setup at 94.97%. Its CI, which has the network, runs them; here they are
left out with `-m "not network"`.
"""

from __future__ import annotations

import re
import shlex

from issuebench.setup.facts import Facts
from issuebench.setup.pytest_config import parse_markers
from issuebench.setup.source import SourceTree

# `parser.addoption("--skip-online", action="store_true", ...)`: a flag, not an option taking a
# value, whose name says it leaves out what needs the network.
_SWITCH = re.compile(r"""addoption\(\s*["'](--(?:(?:skip|no|without|disable)[-_]?(?:online|network|internet|net|remote)"""
                     r"""|offline))["'][^)]{0,300}?action\s*=\s*["']store_true["']""")


def offline_switch(tree: SourceTree) -> str | None:
    """The flag a conftest.py adds for a run without the network (`--skip-online`), or None."""
    for path in tree.files():
        if path.rsplit("/", 1)[-1] != "conftest.py" or path.count("/") > 2:
            continue
        found = _SWITCH.search(tree.read(path) or "")
        if found:
            return found.group(1)
    return None


# A marker for tests that need the network, by its name (`network`, `requires_internet`, `online`)
# or by what its declaration says of it ("needs a network connection", "requires internet access").
_NETWORK_NAME = re.compile(r"(?:requires?_|needs?_)?(?:network|internet|online)(?:_?access|_required)?", re.I)
_NETWORK_WORDS = re.compile(r"\b(?:needs?|needing|requires?|requiring|uses?|using)\s+(?:an?\s+|the\s+)?"
                            r"(?:active\s+|working\s+|live\s+)?(?:network|internet)\b"
                            r"|\b(?:network|internet)\s+(?:connection|connectivity|access)\b", re.I)
# A conftest's own declaration, `config.addinivalue_line("markers", "network: ...")`: its line is
# read as a configuration's `markers` line is.
_CONFTEST_MARKER = re.compile(r"""addinivalue_line\(\s*["']markers["']\s*,\s*["']([^"'\n]{1,300})["']""")


def offline_markers(facts: Facts, tree: SourceTree) -> list[str]:
    """The markers the suite declares (its pytest configuration, a conftest.py near the root) for
    tests that need the network, sorted."""
    declared = dict(facts.pytest_markers)
    for path in tree.files():
        if path.rsplit("/", 1)[-1] == "conftest.py" and path.count("/") <= 2:
            declared.update(parse_markers(_CONFTEST_MARKER.findall(tree.read(path) or "")))
    return sorted(name for name, description in declared.items()
                  if _NETWORK_NAME.fullmatch(name) or _NETWORK_WORDS.search(description))


def without_markers(expression: str | None, markers: list[str]) -> str:
    """A `-m` expression that also leaves out `markers`: `not network`, or `(slow) and not network`
    for a suite whose own command already selects by marker."""
    left_out = markers[0] if len(markers) == 1 else f"({' or '.join(markers)})"
    return f"not {left_out}" if not expression else f"({expression}) and not {left_out}"


def marker_option(markers: list[str]) -> str:
    """pytest's option leaving out `markers`, quoted for a shell command line."""
    return f"-m {shlex.quote(without_markers(None, markers))}"
