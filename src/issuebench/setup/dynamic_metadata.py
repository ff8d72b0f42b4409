"""Dependencies a pyproject leaves dynamic: `[project]` says `dynamic = ["dependencies"]` and lists
none itself. setuptools reads them from files (`[tool.setuptools.dynamic]`); hatch's metadata
hooks give them at build time
(`[tool.hatch.metadata.hooks.uv-dynamic-versioning] dependencies = [...]`,
`[tool.hatch.metadata.hooks.requirements_txt] files = [...]`). Read statically, so that the
packages setup dates and installs include the project's own requirements."""

from __future__ import annotations

import re
from typing import Any

from issuebench.setup.facts import Facts
from issuebench.setup.requirements import parse_requirements_text
from issuebench.setup.source import SourceTree

# A hook may template a requirement (`mcp-types=={{ version }}`: a sibling package pinned to the
# project's own version, known only at build time); the name alone stands for it.
_TEMPLATED = re.compile(r"\s*[<>=!~]=?\s*\{\{[^}]*\}\}.*$")


def read_hatch_metadata_hooks(data: dict[str, Any], facts: Facts, tree: SourceTree) -> None:
    """The dependencies and optional dependencies of every hatch metadata hook, for the fields
    `[project]` leaves dynamic."""
    dynamic = data.get("project", {}).get("dynamic", [])
    hooks = data.get("tool", {}).get("hatch", {}).get("metadata", {}).get("hooks", {})
    if not isinstance(dynamic, list) or not isinstance(hooks, dict):
        return
    for hook in hooks.values():
        if not isinstance(hook, dict):
            continue
        if "dependencies" in dynamic:
            facts.install_requires += _requirements(hook.get("dependencies"))
            facts.install_requires += _requirements_of_files(hook.get("files"), tree)
        extras = hook.get("optional-dependencies")
        if "optional-dependencies" in dynamic and isinstance(extras, dict):
            for extra, entries in extras.items():
                # hatch-requirements-txt names files per extra; others list requirements.
                found = _requirements_of_files(entries, tree) if _all_files(entries, tree) \
                    else _requirements(entries)
                facts.extras.setdefault(str(extra), []).extend(found)


def _requirements(entries: Any) -> list[str]:
    if not isinstance(entries, list):
        return []
    return [_TEMPLATED.sub("", e).strip() for e in entries if isinstance(e, str) and e.strip()]


def _requirements_of_files(files: Any, tree: SourceTree) -> list[str]:
    found: list[str] = []
    for path in [files] if isinstance(files, str) else files if isinstance(files, list) else []:
        body = tree.read(path) if isinstance(path, str) else None
        if body:
            found += parse_requirements_text(body, path, tree.read)[0]
    return found


def _all_files(entries: Any, tree: SourceTree) -> bool:
    return isinstance(entries, list) and bool(entries) and \
        all(isinstance(e, str) and tree.read(e) is not None for e in entries)


def read_setuptools_dynamic(tool: dict[str, Any], facts: Facts, tree: SourceTree) -> None:
    """`[tool.setuptools.dynamic] dependencies = {file = [...]}`: the requirements files named."""
    files = tool.get("setuptools", {}).get("dynamic", {}).get("dependencies", {}).get("file", [])
    facts.install_requires += _requirements_of_files(files, tree)
