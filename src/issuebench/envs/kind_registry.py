"""The environment kinds by name (EnvSpec.kind), as mini-swe-agent maps environment names to
classes: adding a language is a module and a line here."""

from __future__ import annotations

from issuebench.envs.native_kind import NativeKind
from issuebench.envs.node_kind import NodeKind
from issuebench.envs.python_kind import PythonKind

KINDS: dict[str, type] = {
    "python": PythonKind,
    "node": NodeKind,
    "native": NativeKind,
}
