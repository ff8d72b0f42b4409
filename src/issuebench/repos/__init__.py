"""Repositories: finding a clone, reading git objects, a repository's version at a commit, git in a work tree."""

from __future__ import annotations

from issuebench.repos.find import find_repo
from issuebench.repos.objects import ObjectReader
from issuebench.repos.version_rule import find_version, find_versions
from issuebench.repos.worktree import changed_paths, git, reset_paths, tree_blobs

__all__ = [
    "ObjectReader",
    "changed_paths",
    "find_repo",
    "find_version",
    "find_versions",
    "git",
    "reset_paths",
    "tree_blobs",
]
