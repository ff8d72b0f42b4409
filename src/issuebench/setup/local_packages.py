"""Test dependencies that are folders of the repository (poetry's `{ path = ... }`, uv's path
sources): helper packages no index holds, installed from their folder (setup.plan)."""

from __future__ import annotations

from typing import Any

from issuebench.setup.data import canonical_name
from issuebench.setup.facts import Facts
from issuebench.setup.requirements import requirement_name


def read_uv_path_sources(sources: Any, facts: Facts) -> None:
    """A test requirement uv takes from a folder of the repository (`[tool.uv.sources] name =
    { path = "..." }`) is that folder's package, which no index holds: installed from the folder."""
    local = {canonical_name(name): local_path(source["path"]) for name, source in
             (sources.items() if isinstance(sources, dict) else []) if path_dependency(source)}
    if not local:
        return
    named = {r: canonical_name(requirement_name(r) or "") for r in facts.test_requires}
    facts.local_packages += [local[n] for n in dict.fromkeys(named.values()) if n in local]
    facts.test_requires = [r for r in facts.test_requires if named[r] not in local]


def path_dependency(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("path"), str) and bool(value["path"].strip())


def local_path(path: str) -> str:
    """A folder named relative to the repository's root, as `./x/y`."""
    parts = [p for p in path.strip().split("/") if p not in ("", ".")]
    return "./" + "/".join(parts)
