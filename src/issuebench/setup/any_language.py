"""`setup_repository` for any language it knows: a JavaScript project (js_setup) or, as before,
a Python one (loop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from issuebench.envs import EnvBuilder
from issuebench.setup.js_setup import javascript_project, setup_javascript
from issuebench.setup.loop import SetupResult
from issuebench.setup.loop import setup_repository as setup_python_repository


def setup_repository(src: str | Path, *, commit: str | None = None, date: str | None = None,
                     builder: Any = None, sandbox: Any = None, repo_name: str | None = None,
                     **options: Any) -> SetupResult:
    """A recipe for the repository at `commit` (see loop.setup_repository for the options)."""
    if commit is not None and javascript_project(Path(src), commit):
        if builder is None:
            builder = _builder(sandbox)
        return setup_javascript(Path(src), commit=commit, date=date, builder=builder, sandbox=sandbox,
                                repo_name=repo_name, test_timeout=options.get("test_timeout", 1200.0))
    return setup_python_repository(src, commit=commit, date=date, builder=builder, sandbox=sandbox,
                                   repo_name=repo_name, **options)


def _builder(sandbox: Any) -> EnvBuilder:
    return EnvBuilder(sandbox=sandbox)
