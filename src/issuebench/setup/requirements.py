"""Requirement strings: parse requirement files, name a requirement, merge lists without duplicates."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from packaging.requirements import InvalidRequirement, Requirement

from issuebench.setup.data import canonical_name, is_ignored_tool, needs_gpu

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?")


def requirement_name(req: str) -> str | None:
    """The distribution name of a requirement string, canonical; None when it names none."""
    match = _NAME.match(req)
    if not match or "://" in req or req.strip().startswith((".", "/")):
        return None
    return canonical_name(match.group(1))


def requirement_extras(req: str) -> list[str]:
    match = _NAME.match(req)
    if not match or not match.group(2):
        return []
    return [e.strip() for e in match.group(2).strip("[]").split(",") if e.strip()]


def clean_requirement(req: str) -> str | None:
    """A requirement uv can install, or None for comments, options, local paths and URLs."""
    text = unquote(req.split(" #", 1)[0])
    if not text or text.startswith(("#", "-", ".", "/")) or "://" in text or text.startswith("git+"):
        return None
    if requirement_name(text) is None or re.search(r"\.(txt|in|cfg|toml|py|ya?ml|whl|tar\.gz|zip)$", text):
        return None             # a file named where a requirement was expected (`pip install reqs.txt`)
    if "/" in re.split(r"[;<>=!~\s]", text, maxsplit=1)[0]:
        return None             # a local folder (`plugins/sqlfluff-plugin-example`, `dist/`)
    # A word torn out of a command line (`25.1"`) parses as no requirement: no installer takes it.
    return text if _parses(text) else None


def unquote(text: str) -> str:
    """Remove one pair of surrounding quotes (a shell word); a marker's closing quote stays."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].strip()
    return text.lstrip("'\"") if text[:1] in "'\"" and text.count(text[0]) == 1 else text


def parse_requirements_text(text: str, path: str, read: Callable[[str], str | None],
                            _seen: set[str] | None = None) -> tuple[list[str], list[str]]:
    """(requirements, local extras like `.[test]`) of a requirements file, following `-r` includes."""
    seen = _seen if _seen is not None else set()
    seen.add(path)
    folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    reqs: list[str] = []
    local_extras: list[str] = []
    lines = text.replace("\\\n", " ").splitlines()
    for raw in lines:
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        include = re.match(r"^(?:-r|--requirement|-c|--constraint)\s*=?\s*(\S+)", line)
        if include:
            if line.startswith(("-c", "--constraint")):
                continue
            target = _join(folder, include.group(1))
            body = read(target) if target not in seen else None
            if body is not None:
                sub, extras = parse_requirements_text(body, target, read, seen)
                reqs += sub
                local_extras += extras
            continue
        local = re.match(r"^(?:-e\s+)?\.(?:/)?(\[[^\]]+\])?$", line)
        if local:
            local_extras += requirement_extras("x" + (local.group(1) or ""))
            continue
        # Drop pip options that may trail a requirement (--hash=..., --install-option).
        line = re.split(r"\s+--", line, maxsplit=1)[0].strip()
        cleaned = clean_requirement(line)
        if cleaned:
            reqs.append(cleaned)
    return reqs, local_extras


def _join(folder: str, target: str) -> str:
    target = target.replace("{toxinidir}/", "").strip("'\"")
    parts: list[str] = []
    for part in (folder + target).split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def _parses(req: str) -> bool:
    """An installer takes it: a marker torn from its requirement (`python_implementation != "PyPy"`)
    would fail the whole install."""
    try:
        Requirement(req)
    except InvalidRequirement:
        return False
    return True


def merge(*groups: Iterable[str], drop: Iterable[str] = (), keep_tools: bool = False,
          keep: Iterable[str] = ()) -> list[str]:
    """One requirement per distribution and marker, first seen wins unless a later one is more
    specific. Entries of one name under different markers are all kept (pytest 4.4 lists
    more-itertools once for Python 2.7 and once for later ones): which applies is decided when the
    markers are evaluated for the chosen Python.

    A later one that narrows an earlier range wins too: a project that lists `aiohttp>3.9` and, in
    the extra its CI installs, `aiohttp==3.13.5` (aiounifi) tested against that pin, and its mocks
    fail with the newest release the range alone takes; django-cms lists `django-treebeard>=4.3`
    and its test requirements `django-treebeard>=4.3,<6` (7.0 removed what its tests call).

    Development tools (linters, docs builders) are dropped unless keep_tools or named in keep (a
    project's own runtime requirements: sphinx needs sphinxcontrib-* to import at all); names in
    drop are always dropped, and so are packages for a GPU (no sandbox has one).
    """
    dropped = {canonical_name(d) for d in drop}
    kept = {n for n in (requirement_name(k) for k in keep) if n}
    out: dict[str, str] = {}
    for group in groups:
        for req in group:
            name = requirement_name(req)
            if name is None or name in dropped or needs_gpu(name) or (
                    not keep_tools and name not in kept and is_ignored_tool(name)) or not _parses(req):
                continue
            key = f"{name};{split_marker(req)[1]}"
            if key not in out or (_is_bare(out[key]) and not _is_bare(req)) or _narrows(req, out[key]):
                out[key] = _with_extras_of(req.strip(), out.get(key))
            else:
                out[key] = _with_extras_of(out[key], req)
    return list(out.values())


def _with_extras_of(kept: str, other: str | None) -> str:
    """`kept` also asking for the extras `other` asks for: a project's own `fsspec>=2024.5` and its
    test extra's `fsspec[smb,s3]>=2024.5` are one requirement, and the extras are what the tests
    import (universal_pathlib's conftest imports smbclient through fsspec[smb])."""
    if other is None:
        return kept
    try:
        mine, theirs = Requirement(kept), Requirement(other)
    except InvalidRequirement:
        return kept
    if theirs.extras <= mine.extras:
        return kept
    mine.extras |= theirs.extras
    return str(mine)


def split_marker(req: str) -> tuple[str, str]:
    """A requirement's specifier part and its environment marker ("" when it has none)."""
    head, _, marker = req.partition(";")
    return head.strip(), marker.strip()


def _narrows(later: str, earlier: str) -> bool:
    """`later` allows only releases `earlier` allows, and fewer: it keeps every clause of
    `earlier` and adds some (`>=4.3,<6` after `>=4.3`), or names one release in its range."""
    try:
        narrow, wide = Requirement(later), Requirement(earlier)
    except InvalidRequirement:
        return False
    mine, theirs = set(narrow.specifier), set(wide.specifier)
    if theirs < mine:
        return True
    pins = [s for s in mine if s.operator in ("==", "===") and "*" not in s.version]
    return len(mine) == 1 and bool(pins) and mine != theirs and \
        wide.specifier.contains(pins[0].version, prereleases=True)


def _is_bare(req: str) -> bool:
    return not re.search(r"[<>=!~;@]", req)


def evaluate_markers(reqs: Iterable[str], python: str) -> list[str]:
    """Requirements for one target Python: markers evaluated and removed, non-matching ones dropped.

    Recipes then hold plain specifiers (what is installed is what is listed), and a later switch of
    Python re-evaluates the original list. Unparseable markers are kept as written.
    """
    import platform

    try:
        from packaging.markers import InvalidMarker, Marker
    except ImportError:  # pragma: no cover - packaging ships with pip and uv's tooling
        return list(reqs)
    env = {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
           "platform_system": "Linux", "os_name": "posix", "implementation_name": "cpython",
           "platform_python_implementation": "CPython", "platform_machine": platform.machine(), "extra": ""}
    out = []
    for req in reqs:
        head, marker = split_marker(req)
        if not marker:
            out.append(req)
            continue
        try:
            keep = Marker(marker).evaluate(env)
        except (InvalidMarker, ValueError, KeyError):
            out.append(req)
            continue
        if keep:
            out.append(head)
    return out


# A folder named for one Python (`requirements/3.3/`, `py27/`, `python3.4/`): its files pin what
# that interpreter needed (dateutil's pytest<3.3 and setuptools<40 for 3.3), not the suite's needs.
_PYTHON_FOLDER = re.compile(r"^(?:py|python)?(\d)\.?(\d{1,2})$")


def python_of_path(path: str) -> str | None:
    """The Python a requirements file's folder is named for (`requirements/3.3/dev.txt` -> 3.3)."""
    for part in path.split("/")[:-1]:
        match = _PYTHON_FOLDER.match(part)
        if match:
            return f"{match.group(1)}.{match.group(2)}"
    return None


def only_for_python(reqs: Iterable[str], python: str | None) -> list[str]:
    """The requirements limited by a marker to that Python (unchanged for None)."""
    if python is None:
        return list(reqs)
    out = []
    for req in reqs:
        head, marker = split_marker(req)
        limit = f"python_version == '{python}'"
        out.append(f"{head}; ({marker}) and {limit}" if marker else f"{head}; {limit}")
    return out

