"""Requirement lines and files as the environment builder reads them: exact pins, includes, local
editables, and direct references (VCS or archive URLs) that an offline build cannot fetch."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from issuebench.envs.conda import requirements_from_conda_env

_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*===?\s*([^\s;,]+)\s*(;.*)?$")
# Local editable lines in requirement files would install the throw-away build copy: dropped, since
# the spec's install commands install the project at TESTBED_PATH.
_LOCAL_EDITABLE = re.compile(r"^\s*(-e|--editable)\s+(\.|file:|\./)|^\s*\.\s*$")
_INCLUDE = re.compile(r"^\s*(-r|--requirement|-c|--constraint)\s*=?\s*(\S+)\s*$")
# `name @ git+https://...`, `-e git+https://...#egg=name`, or a bare `git+https://host/owner/name.git@rev`.
_DIRECT = re.compile(
    r"^\s*(?:(?:-e|--editable)\s+)?(?:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*@\s*)?"
    r"(?P<url>(?:git|hg|svn|bzr)\+[^\s;]+|https?://[^\s;]+\.(?:zip|tar\.gz|tgz|whl)(?:#[^\s;]*)?)\s*(?P<marker>;.*)?$")

Note = Callable[[str], None]


def unquote(requirement: str) -> str:
    """Drop one pair of surrounding quotes (recipes copied from shell lines carry them), and only a
    pair: a marker such as `python_version<'3.8'` ends in a quote that belongs to it."""
    text = requirement.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].strip()
    return text


def exact_pins(packages: Sequence[str]) -> list[tuple[str, str]]:
    """(name, version) of each requirement given as an exact pin (`name==1.2`)."""
    pins = []
    for spec in packages:
        match = _PIN.match(unquote(spec))
        if match:
            pins.append((match.group(1), match.group(3)))
    return pins


def pinned_names(packages: Sequence[str]) -> list[str]:
    """Names of packages given as exact pins (`name==1.2`), which the date cutoff must not block."""
    return [name for name, _ in exact_pins(packages)]


def requirement_file_pins(path: Path, _depth: int = 0) -> list[tuple[str, str]]:
    """(name, version) pinned with == in a requirements file, following its -r includes."""
    pins: list[tuple[str, str]] = []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return pins
    for raw in lines:
        line = raw.split(" #", 1)[0].strip()
        for flag in ("-r ", "--requirement "):
            if line.startswith(flag) and _depth < 5:
                pins += requirement_file_pins(path.parent / line[len(flag):].strip(), _depth + 1)
        pins += exact_pins([line])
    return pins


def direct_reference_name(line: str) -> str | None:
    """The distribution a VCS or archive URL requirement stands for, or None if the line is not one.

    The name comes from `name @ url`, else `#egg=name`, else the URL's last path part
    (`.../sphinx.git@96dbe5e3` is sphinx).
    """
    match = _DIRECT.match(line)
    if not match:
        return None
    if match.group("name"):
        return match.group("name")
    url = match.group("url")
    egg = re.search(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)", url)
    if egg:
        return egg.group(1)
    path = url.split("#", 1)[0].split("+", 1)[-1].rstrip("/")
    last = path.rsplit("/", 1)[-1].split("@", 1)[0]
    last = re.sub(r"\.git$", "", last)
    return last if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", last) else None


def usable_requirements(source: Path, note: Note, scratch: Path, _depth: int = 0) -> Path:
    """A copy of a requirements file uv can use, written to `scratch` (never into the workspace):
    conda env files translated, local editables dropped, direct references replaced by the same
    distribution from the index (as of the build's date), nested -r/-c files handled the same way."""
    if source.suffix in (".yml", ".yaml"):
        lines, skipped = requirements_from_conda_env(source.read_text(encoding="utf-8"))
        if skipped:
            note(f"# {source.name}: conda-only entries not installed: {', '.join(skipped)}")
    else:
        lines = [_usable_line(line, source, note, scratch, _depth)
                 for line in source.read_text(encoding="utf-8", errors="replace").splitlines()]
    out = scratch / f"{len(list(scratch.iterdir()))}-{source.name}.txt"
    out.write_text("\n".join(line for line in lines if line is not None) + "\n", encoding="utf-8")
    return out


def _usable_line(line: str, source: Path, note: Note, scratch: Path, depth: int) -> str | None:
    if _LOCAL_EDITABLE.match(line):
        note(f"# {source.name}: dropped `{line.strip()}` (the install step installs the project)")
        return None
    include = _INCLUDE.match(line)
    if include:
        nested = (source.parent / include.group(2)).resolve()
        if nested.is_file() and depth < 5:
            return f"{include.group(1)} {usable_requirements(nested, note, scratch, depth + 1)}"
        return line
    name = direct_reference_name(line)
    if name is not None:
        # A commit of another project's repository cannot be fetched here (no network but the
        # package index); its release on the index, as of the build's date, is the nearest thing.
        marker = _DIRECT.match(line).group("marker") or ""  # type: ignore[union-attr]
        note(f"# substituted: {source.name}: `{line.strip()}` -> `{name}` from the package index "
             "as of the build's date (a direct reference cannot be fetched offline)")
        return f"{name}{marker}"
    if line.strip() and not line.lstrip().startswith(("-", "#")) and "/" in line.split(";")[0]:
        # A relative local path requirement: make it absolute, since the copy lives elsewhere.
        candidate = (source.parent / line.strip()).resolve()
        if candidate.exists():
            return str(candidate)
    return line


def drop_from_conda_files(argv: Sequence[str], names: Sequence[str]) -> bool:
    """Remove requirements on `names` from the translated conda files among argv's `-r FILE`s
    (our scratch copies, named after their `.yml` source); True when any line was removed."""
    from packaging.utils import canonicalize_name

    wanted = {canonicalize_name(n) for n in names}
    dropped = False
    for flag, value in itertools.pairwise(argv):
        path = Path(value)
        if flag != "-r" or not path.name.endswith((".yml.txt", ".yaml.txt")):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines
                if canonicalize_name(re.split(r"[\s<>=!~;\[(]", line.strip(), maxsplit=1)[0] or "-") not in wanted]
        if len(kept) != len(lines):
            path.write_text("\n".join(kept) + "\n", encoding="utf-8")
            dropped = True
    return dropped
