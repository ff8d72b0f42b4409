""".gitmodules: the submodules a snapshot lacks, the repositories that fill them, and the Python
packages vendored as submodules that setup.py imports (a build requirement from the index)."""

from __future__ import annotations

import re

from issuebench.setup.facts import Facts

_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(\S+)\s*$", re.MULTILINE)
_SUBMODULE_URL = re.compile(r"^\s*url\s*=\s*(\S+)\s*$", re.MULTILINE)
# The repository a url names: the last two parts of its path (https://host/owner/name.git,
# git@host:owner/name); a relative url (../name) names none.
_URL_REPO = re.compile(r"(?:^[a-z+]+://[^/]+/|^[\w.-]+@[\w.-]+:)(?:[^\s]*/)?([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


def _submodule_sections(text: str) -> list[tuple[str, str]]:
    """(path, url) of each `[submodule ...]` section; url empty when it names none."""
    out = []
    for section in re.split(r"^\s*\[submodule\b[^\]]*\]\s*$", text, flags=re.MULTILINE)[1:]:
        path, url = _SUBMODULE_PATH.search(section), _SUBMODULE_URL.search(section)
        if path:
            out.append((path.group(1).strip("/"), url.group(1) if url else ""))
    return out


def read_gitmodules(text: str, facts: Facts, files: list[str], setup_py: str) -> None:
    """A Python package vendored as a git submodule that the snapshot does not hold is a build
    requirement from the index: a clone or archive has no submodule checkout, and the project's
    bootstrap (astropy's ah_bootstrap) takes an installed copy before it tries git or a download,
    neither of which the sandbox allows. Only a submodule setup.py imports counts: other
    submodules (docs themes, test data) are no distributions."""
    for path, url in _submodule_sections(text):
        if not any(f.startswith(path + "/") for f in files) and path not in facts.absent_submodules:
            facts.absent_submodules.append(path)
            named = _URL_REPO.match(url)
            if named:
                facts.submodule_repos[path] = f"{named.group(1)}/{named.group(2)}"
        if not path.isidentifier() or any(f.startswith(path + "/") for f in files):
            continue
        if not re.search(rf"^\s*(from|import)\s+{path}\b", setup_py, re.MULTILINE):
            continue
        name = path.replace("_", "-")
        if name not in facts.setup_requires:     # setup.py's own build needs, with or without a pyproject
            facts.setup_requires.append(name)
            facts.notes.append(f".gitmodules: submodule {path} is not in the snapshot; "
                               f"{name} from the index as a build requirement")
