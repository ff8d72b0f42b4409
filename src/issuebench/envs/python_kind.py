"""The "python" kind: a uv venv per spec hash (builder.EnvBuilder's own build), and per run the
commit's layer of missing requirements (instance_requirements) and numpy's common numerics
(numerics). Behaviour is that of the harness before kinds existed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from issuebench.envs.dated_install import HelperFailed
from issuebench.envs.instance_requirements import Layer, layer_for
from issuebench.envs.kinds import RunPreparation
from issuebench.envs.numerics import with_common_numerics
from issuebench.envs.python_bytecode import fill_pristine_bytecode
from issuebench.models import EnvSpec


class PythonKind:
    name = "python"

    def __init__(self, host: Any) -> None:
        self.host = host

    def ensure(self, spec: EnvSpec, workspace: Path) -> Any:
        return self.host.ensure_python(spec, workspace)

    def prepare_run(self, env: Any, workspace: Path) -> RunPreparation:
        """The layer the commit needs (HelperFailed when what it declares cannot be read: the
        caller fails the instance) and numpy's AVX-512 kernels off."""
        prep = RunPreparation(binds=env.binds(), env=env.run_env())
        # A graded run writes bytecode, as under the reference (which does not set the variable): its
        # __pycache__ names the modules to compile into the pristine checkout afterwards (after_run).
        prep.env.pop("PYTHONDONTWRITEBYTECODE", None)
        _add_layer(prep, *layer_for(env, workspace, self.host.sandbox, self.host))
        prep.env, numerics = with_common_numerics(prep.env, env, workspace, self.host.sandbox)
        if numerics:
            prep.log.append(numerics)
        return prep

    def prepare_patched_run(self, env: Any, workspace: Path, prep: RunPreparation) -> RunPreparation:
        """`prep` with a layer first on the path for what the patches added to the project's declared
        requirements (none when they changed no declaring file)."""
        try:
            layer, note = layer_for(env, workspace, self.host.sandbox, self.host, patched=True)
        except HelperFailed as exc:
            # The patched setup.py gives no answer: the tests run with what the commit declares.
            layer, note = None, f"the patched project's declared requirements could not be read: {exc}"
        patched = RunPreparation(binds=list(prep.binds), env=dict(prep.env), notes=list(prep.notes),
                                 log=list(prep.log))
        _add_layer(patched, layer, note)
        return patched

    def after_run(self, env: Any, workspace: Path, pristine: Path) -> list[str]:
        """Bytecode of the modules the run compiled, kept in the pristine checkout for later runs."""
        line = fill_pristine_bytecode(env, workspace, pristine, self.host.sandbox)
        return [line] if line else []


def _add_layer(prep: RunPreparation, layer: Layer | None, note: str | None) -> None:
    """The layer first on the run's path, its note among the run's notes."""
    if note:
        prep.notes.append(note)
    if layer is not None:
        prep.binds, prep.env = [*prep.binds, *layer.binds()], layer.apply(prep.env)
