"""C sources a setup.py compiles but the repository only holds as Cython: generated before the
install.

A project that ships its generated `.c` in the sdist alone (frozenlist 1.1 and 1.2:
`Extension('frozenlist._frozenlist', ['frozenlist/_frozenlist.c'])`, the `.c` made by its
Makefile's `cython` step) fails every build from a git snapshot with `gcc: ... No such file`,
whatever the Python; the build diagnosis saw no known cause and tried older Pythons.
"""

from __future__ import annotations

import re
import shlex

from issuebench.setup.source import SourceTree

CYTHON = "cython"


def missing_cython_outputs(tree: SourceTree) -> list[str]:
    """The `.pyx` files whose `.c` setup.py names but the tree lacks (none when setup.py runs
    Cython itself)."""
    text = tree.read("setup.py") if tree.exists("setup.py") else None
    if not text or re.search(r"\bcythonize\b|from Cython|import Cython", text):
        return []
    files = set(tree.files())
    out = []
    for path in sorted(files):
        if not path.endswith(".pyx"):
            continue
        c_file = path[: -len(".pyx")] + ".c"
        if c_file not in files and re.search(rf"""['"](?:\./)?{re.escape(c_file)}['"]""", text):
            out.append(path)
    return out


def cythonize_commands(pyx_files: list[str]) -> list[str]:
    """One command per file, run with the environment's Cython before the install (Python 3
    semantics; the file's folder on the include path for its .pxd files)."""
    commands = []
    for pyx in pyx_files:
        folder = pyx.rpartition("/")[0] or "."
        c_file = pyx[: -len(".pyx")] + ".c"
        commands.append(f"python -m cython -3 -I {shlex.quote(folder)} -o {shlex.quote(c_file)} "
                        f"{shlex.quote(pyx)}")
    return commands
