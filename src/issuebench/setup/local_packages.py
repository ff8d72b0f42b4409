"""Test dependencies that are folders of the repository (poetry's `{ path = ... }`, uv's path
sources): helper packages no index holds, installed from their folder (setup.plan)."""

from __future__ import annotations

import fnmatch
from typing import Any

from issuebench.setup.data import canonical_name
from issuebench.setup.facts import Facts
from issuebench.setup.requirements import requirement_name
from issuebench.setup.source import SourceTree
from issuebench.tomlcompat import tomllib


def read_uv_packages(uv: Any, facts: Facts, tree: SourceTree) -> None:
    """The repository's own packages uv's table names: path sources, then workspace members."""
    read_uv_path_sources(uv.get("sources", {}) if isinstance(uv, dict) else {}, facts)
    read_uv_workspace(uv, facts, tree)


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


def read_uv_workspace(uv: Any, facts: Facts, tree: SourceTree) -> None:
    """The members of a uv workspace (`[tool.uv.workspace] members = ["core", "extensions/*"]`)
    are packages of the repository that no index holds at the commit (pystac's pystac-core and 22
    extensions, each refused as having no release before the date): every requirement naming one,
    and each member it needs in turn, is installed from its folder; the members' own dependencies
    from the index join the project's."""
    members = _workspace_members(uv, tree)
    if not members:
        return
    wanted: list[str] = []
    queue = [r for r in [*facts.install_requires, *facts.test_requires,
                         *(r for rs in facts.extras.values() for r in rs)] if _name(r) in members]
    while queue:
        name = _name(queue.pop(0))
        if name in wanted:
            continue
        wanted.append(name)
        for requirement in members[name][1]:
            if _name(requirement) in members:
                queue.append(requirement)
            elif requirement not in facts.install_requires:
                facts.install_requires.append(requirement)
    facts.local_packages += [members[name][0] for name in wanted]
    facts.install_requires = [r for r in facts.install_requires if _name(r) not in members]
    facts.test_requires = [r for r in facts.test_requires if _name(r) not in members]
    for extra, reqs in facts.extras.items():
        facts.extras[extra] = [r for r in reqs if _name(r) not in members]


def _name(requirement: str) -> str:
    return canonical_name(requirement_name(requirement) or "")


def _workspace_members(uv: Any, tree: SourceTree) -> dict[str, tuple[str, list[str]]]:
    """Member package name -> (its folder as `./x`, its dependencies), from the members' globs."""
    workspace = uv.get("workspace", {}) if isinstance(uv, dict) else {}
    patterns = [p.strip("/") for p in workspace.get("members", []) if isinstance(p, str)]
    excluded = [p.strip("/") for p in workspace.get("exclude", []) if isinstance(p, str)]
    members: dict[str, tuple[str, list[str]]] = {}
    for path in tree.files():
        folder, _, file = path.rpartition("/")
        if file != "pyproject.toml" or not folder or not any(fnmatch.fnmatch(folder, p) for p in patterns) \
                or any(fnmatch.fnmatch(folder, p) for p in excluded):
            continue
        try:
            project = tomllib.loads(tree.read(path) or "").get("project", {})
        except tomllib.TOMLDecodeError:
            continue
        if isinstance(project.get("name"), str):
            deps = [r for r in project.get("dependencies", []) if isinstance(r, str)]
            members[canonical_name(project["name"])] = (local_path(folder), deps)
    return members
