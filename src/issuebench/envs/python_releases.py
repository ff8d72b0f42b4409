"""The table of CPython minor versions (release dates, adoption policy, removed modules), as data.

Environments date their packages by it; setup ranks interpreters by it. It lives with the
environments, the lower of the two.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from issuebench.tomlcompat import tomllib

TABLE = Path(__file__).resolve().parent / "data" / "pythons.toml"


@functools.cache
def python_table() -> dict[str, Any]:
    with TABLE.open("rb") as handle:
        return tomllib.load(handle)
