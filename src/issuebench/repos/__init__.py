"""Repositories: finding a clone, reading git objects, a repository's version at a commit."""
