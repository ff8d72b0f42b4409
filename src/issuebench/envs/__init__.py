"""Environments: interpreters, uv venvs built once per spec hash, recipes as data, the importer.

    EnvBuilder(cache_dir=None, sandbox=None, python_fallback="error", offline=False).ensure(spec, ws) -> Env
    resolve_spec(task, recipes_dir=None) -> EnvSpec
    find_python(version, fallback="error") -> PythonInfo
"""

from __future__ import annotations

from issuebench.envs.builder import Env, EnvBuilder, EnvBuildError, exclude_newer_args, pinned_names
from issuebench.envs.interpreters import PythonInfo, find_python, installed_pythons
from issuebench.envs.recipes import fill_exclude_newer, packaged_recipes_dir, resolve_spec

__all__ = [
    "Env",
    "EnvBuildError",
    "EnvBuilder",
    "PythonInfo",
    "exclude_newer_args",
    "fill_exclude_newer",
    "find_python",
    "installed_pythons",
    "packaged_recipes_dir",
    "pinned_names",
    "resolve_spec",
]
