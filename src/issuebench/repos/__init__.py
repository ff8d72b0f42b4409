"""Repositories: finding a clone, reading git objects, a repository's version at a commit."""

from __future__ import annotations

from issuebench.repos.find import find_repo
from issuebench.repos.objects import ObjectReader
from issuebench.repos.version_rule import find_version, find_versions

__all__ = [
    "ObjectReader",
    "find_repo",
    "find_version",
    "find_versions",
]
