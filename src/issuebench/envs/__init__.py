"""Environments: interpreters, uv venvs built once per spec hash, recipes as data, the importer.

    EnvBuilder(cache_dir=None, sandbox=None, python_fallback="error", offline=False).ensure(spec, ws) -> Env
    resolve_spec(task, recipes_dir=None) -> EnvSpec
    find_python(version, fallback="error") -> PythonInfo
"""

from __future__ import annotations

from issuebench.envs.build_log import EnvBuildError, last_error_line
from issuebench.envs.builder import EnvBuilder, exclude_newer_args
from issuebench.envs.cache import clear_failure, env_path, list_envs, prune, real_disk_usage
from issuebench.envs.dated_install import (
    HelperFailed,
    local_install_targets,
    pep621_requirements,
    read_declared,
    split_listing,
    wanted_extras,
)
from issuebench.envs.dated_packages import left_out_packages
from issuebench.envs.dating import date_args, effective_cutoff, exempt_from_cutoff
from issuebench.envs.instance_requirements import Layer, instance_layer, layer_for, unmet
from issuebench.envs.interpreters import PythonInfo, find_python, installed_pythons, uv_binary, uv_command
from issuebench.envs.kind_registry import KINDS
from issuebench.envs.kinds import BuiltEnv, EnvKind, RunPreparation, UnknownKind, plain_preparation
from issuebench.envs.python_env import Env
from issuebench.envs.python_releases import python_table
from issuebench.envs.recipes import (
    fill_exclude_newer,
    known_versions,
    load_recipe,
    packaged_recipes_dir,
    pick_version,
    recipe_filename,
    resolve_spec,
)
from issuebench.envs.reference_recipes import import_swebench
from issuebench.envs.registry_kinds import LANGUAGES, RegistryUnreachable
from issuebench.envs.requirements import pinned_names
from issuebench.envs.system_deps import (
    install_command,
    install_packages,
    missing_packages,
    recipe_packages,
    unknown_packages,
)
from issuebench.envs.uv_compile import compile_at_date

__all__ = [
    "KINDS",
    "LANGUAGES",
    "BuiltEnv",
    "Env",
    "EnvBuildError",
    "EnvBuilder",
    "EnvKind",
    "HelperFailed",
    "Layer",
    "PythonInfo",
    "RegistryUnreachable",
    "RunPreparation",
    "UnknownKind",
    "clear_failure",
    "compile_at_date",
    "date_args",
    "effective_cutoff",
    "env_path",
    "exclude_newer_args",
    "exempt_from_cutoff",
    "fill_exclude_newer",
    "find_python",
    "import_swebench",
    "install_command",
    "install_packages",
    "installed_pythons",
    "instance_layer",
    "known_versions",
    "last_error_line",
    "layer_for",
    "left_out_packages",
    "list_envs",
    "load_recipe",
    "local_install_targets",
    "missing_packages",
    "packaged_recipes_dir",
    "pep621_requirements",
    "pick_version",
    "pinned_names",
    "plain_preparation",
    "prune",
    "python_table",
    "read_declared",
    "real_disk_usage",
    "recipe_filename",
    "recipe_packages",
    "resolve_spec",
    "split_listing",
    "unknown_packages",
    "unmet",
    "uv_binary",
    "uv_command",
    "wanted_extras",
]
