"""The environment kinds by name (EnvSpec.kind), as mini-swe-agent maps environment names to
classes: adding a language is a module and a line here."""

from __future__ import annotations

from issuebench.envs.native_kind import NativeKind
from issuebench.envs.node_kind import NodeKind
from issuebench.envs.python_kind import PythonKind
from issuebench.envs.registry_kinds import LANGUAGES, registry_kind

KINDS: dict[str, type] = {
    "python": PythonKind,
    "node": NodeKind,
    "native": NativeKind,
    # Languages whose packages come from a registry of their own (status needs_registry without it).
    **{name: registry_kind(name) for name in LANGUAGES},
}
