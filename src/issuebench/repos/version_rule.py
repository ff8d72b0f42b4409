"""The release a commit belongs to, read from the repository itself, and where it was read.

Measured on SWE-bench Lite rows against their own `version` (docs/environments.md, "Versions
from the repository"): a project's own version file is right more often than the nearest tag,
because tags of maintenance releases live on branches `git describe` does not walk (seaborn,
sphinx), while the file names the release being prepared (sphinx `3.5.0+`, sympy `1.5.dev`).
The tag decides only when the tree carries no literal version (setuptools_scm and versioneer
projects: pytest, xarray, astropy), and then as written (`8.0.0.dev0` -> 8.0; pytest tags its
next release's dev marker, so the nearest tag is already the release being prepared).

Order: a literal `__version__` (or `version`) in a file directly inside the package named
after the repository (never in vendored or test code: sympy once shipped mpmath's
`__version__ = '0.4'` inside its own tree); static metadata (setup.cfg, pyproject.toml,
setup.py); the nearest version-like tag; last, the one version file of another top-level package.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from issuebench.repos.objects import VERSION_TAGS, ObjectReader, as_text, describe_version_tags

_VERSION = re.compile(r"(\d+)\.(\d+)")
# `__version__ = "1.5.dev"`, `version = '2.0'`, `__version__: str = "x"`; literal strings only.
_ASSIGN = r"""^(?:__version__|version|VERSION)\s*(?::\s*str\s*)?=\s*['"]v?(\d+\.\d+[^'"]*)['"]"""
_ASSIGN_RE = re.compile(_ASSIGN, re.MULTILINE)
# `numversion = (2, 4, 0)` (pylint and astroid before they wrote a string).
_NUMVERSION = re.compile(r"^numversion\s*=\s*\(\s*(\d+)\s*,\s*(\d+)", re.MULTILINE)
# The files a project keeps its version in, directly under its package folder.
_VERSION_FILES = ("__init__.py", "release.py", "version.py", "_version.py", "__pkginfo__.py",
                  "__about__.py", "_release.py", "info.py")
# Tags of releases: `v1.2`, `1.2.3`, `sympy-1.1.1`, `pylint-2.4`, `release-0.9.4`, `8.0.0.dev0`.
_TAG = re.compile(r"^(?:(?P<prefix>[A-Za-z][\w.]*?)[-_])?v?(\d+)\.(\d+)(?:[.\-_+]?[\w.+-]*)?$")
# Prefixes that name a release, not a package: `release-0.9.4`.
_RELEASE_WORDS = {"release", "rel", "version", "ver"}
_METADATA = (("setup.cfg", re.compile(r"^version\s*=\s*v?(\d+\.\d+[^\s#]*)", re.MULTILINE)),
             ("pyproject.toml", re.compile(r"""^version\s*=\s*['"]v?(\d+\.\d+[^'"]*)['"]""", re.MULTILINE)),
             ("setup.py", re.compile(r"""\b(?:version|VERSION)\s*=\s*['"]v?(\d+\.\d+[^'"]*)['"]""")))


@dataclass(frozen=True)
class FoundVersion:
    """`version` is "major.minor"; `source` says where it was read (a file path or `tag NAME`)."""

    version: str
    source: str


def major_minor(text: str) -> str | None:
    match = _VERSION.search(text)
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


def package_names(repo: str | None, repo_dir: Path) -> list[str]:
    """Folder names the project's own package may have: from `owner/name` or a clone named
    `owner__name`; `pvlib-python` -> pvlib, `scikit-learn` -> scikit_learn and sklearn."""
    name = (repo or repo_dir.name.removesuffix(".git")).split("/")[-1].split("__")[-1].lower()
    names = [name.replace("-", "_"), name.replace("-", "")]
    for affix in ("-python", "python-", "py-", "-py"):
        if affix in name:
            names.append(name.replace(affix, "").replace("-", "_"))
    if name.startswith("scikit-"):
        names.append("sk" + name.removeprefix("scikit-"))
    return list(dict.fromkeys(names))


def _read_version_file(reader: ObjectReader, commit: str, path: str) -> FoundVersion | None:
    text = reader.show(commit, path)
    if (match := _ASSIGN_RE.search(text)) and (version := major_minor(match.group(1))):
        return FoundVersion(version, path)
    if match := _NUMVERSION.search(text):
        return FoundVersion(f"{int(match.group(1))}.{int(match.group(2))}", path)
    return None


def version_from_package(reader: ObjectReader, commit: str, names: list[str]) -> FoundVersion | None:
    """A literal version in a version file directly inside one of the folders `names` (the
    package named after the repository; also under src/ or lib/)."""
    tree = reader.ls(commit)
    roots = [n for n in names if n in tree]
    for parent in ("src", "lib"):
        if parent in tree:
            roots += [f"{parent}/{n}" for n in names if n in reader.ls(commit, parent)]
    for root in roots:
        for name in _VERSION_FILES:
            if found := _read_version_file(reader, commit, f"{root}/{name}"):
                return found
    return None


def version_from_other_package(reader: ObjectReader, commit: str) -> FoundVersion | None:
    """The last resort: a package not named after the repository, when exactly one top-level
    package of the tree states a version (test, doc and vendored folders never count)."""
    skip = {"test", "tests", "testing", "doc", "docs", "examples", "benchmarks", "scripts", "extern",
            "vendor", "_vendor", "build", "tools", "ci"}
    found = {f for name in reader.ls(commit) if name not in skip and not name.startswith(".")
             if (f := version_from_package(reader, commit, [name]))}
    return found.pop() if len({f.version for f in found}) == 1 else None


def version_from_metadata(reader: ObjectReader, commit: str) -> FoundVersion | None:
    for name, pattern in _METADATA:
        text = reader.show(commit, name)
        if (match := pattern.search(text)) and (version := major_minor(match.group(1))):
            return FoundVersion(version, name)
    return None


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name.lower())


def _other_packages_tag(repo_dir: Path, names: list[str]) -> Callable[[str], bool]:
    """Whether a tag is a release of another package the repository holds (zarr's
    `zarr_indexing-v0.2.1` beside its own `v3.1.0`): prefixed by a name that is neither the
    project's nor a word for release, in a repository that also tags releases without a prefix.
    Such a tag says nothing of the project's own version."""
    own = {_normal(n) for n in names} | _RELEASE_WORDS
    listed = subprocess.run(["git", "tag", "--list", VERSION_TAGS], cwd=repo_dir, capture_output=True,
                            check=False)
    tags = [t for t in as_text(listed.stdout).split("\n") if t]
    if not any((m := _TAG.match(t)) and not m.group("prefix") for t in tags):
        return lambda tag: False

    def other(tag: str) -> bool:
        match = _TAG.match(tag)
        return bool(match and match.group("prefix") and _normal(match.group("prefix")) not in own)
    return other


def versions_from_tags(repo_dir: Path, commits: list[str], names: list[str] | None = None
                       ) -> dict[str, FoundVersion | None]:
    """Each commit's nearest tag holding a digit-dot-digit, all commits in one `git describe`
    per step; names that only carry digits (`untagged-eb9d2...`) and, given the project's
    package `names`, releases of another package of the repository are skipped by describing
    the tag's parent, up to 20 steps."""
    other = _other_packages_tag(repo_dir, names) if names else (lambda tag: False)
    out: dict[str, FoundVersion | None] = {}
    walk = {commit: (commit, set[str]()) for commit in commits}  # commit -> (target, tags seen)
    for _ in range(20):
        if not walk:
            break
        tags = describe_version_tags(repo_dir, [target for target, _ in walk.values()])
        for commit, (target, seen) in list(walk.items()):
            tag = tags[target]
            if not tag or tag in seen:
                del walk[commit]
                out[commit] = None
            elif (match := _TAG.match(tag)) and not other(tag):
                del walk[commit]
                out[commit] = FoundVersion(f"{int(match.group(2))}.{int(match.group(3))}", f"tag {tag}")
            else:
                seen.add(tag)
                walk[commit] = (f"{tag}^", seen)
    out.update(dict.fromkeys(walk))
    return out


def find_versions(repo_dir: Path, commits: list[str], repo: str | None = None,
                  reader: ObjectReader | None = None) -> dict[str, FoundVersion | None]:
    """find_version of many commits: files through one reader (pass one to share its memory
    across calls), tags through one `git describe` per step."""
    if reader is None:
        with ObjectReader(repo_dir) as own:
            return find_versions(repo_dir, commits, repo, own)
    names = package_names(repo, repo_dir)
    out = {c: version_from_package(reader, c, names) or version_from_metadata(reader, c)
           for c in dict.fromkeys(commits)}
    out.update(versions_from_tags(repo_dir, [c for c, found in out.items() if found is None], names))
    for commit, found in out.items():
        if found is None:
            out[commit] = version_from_other_package(reader, commit)
    return out


def find_version(repo_dir: Path, commit: str, repo: str | None = None) -> FoundVersion | None:
    """The release `commit` belongs to, "major.minor", and where that was read; None if nowhere."""
    return find_versions(repo_dir, [commit], repo)[commit]
