"""A suite's own switch for running without the network, turned on.

pip-audit's conftest adds `--skip-online`, which skips every test marked `online` (they query
PyPI and the vulnerability services); its CI, which has the network, never passes it. Without it
those tests wait on each service until the run's limit, and validate refused its tasks for time.
The sandbox never gives the network, so a switch the project offers for that is always on.
"""

from __future__ import annotations

import re

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
