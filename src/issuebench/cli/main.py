"""The `issuebench` command. Thin: each verb lives in its own module, which registers itself."""

from __future__ import annotations

import importlib
import sys

import typer

from issuebench import __version__
from issuebench.cli.common import console, run_guarded

app = typer.Typer(
    name="issuebench",
    help="Turn real repositories into graded coding tasks, and grade patches against them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# One module per verb group; each exposes register(app). Adding a verb touches no other module.
_COMMAND_MODULES = [
    "eval_cmd",
    "regrade_cmd",
    "demo_cmd",
    "envs_cmd",
    "setup_cmd",
    "collect_cmd",
    "analysis_cmd",
]

for _name in _COMMAND_MODULES:
    importlib.import_module(f"issuebench.cli.{_name}").register(app)


@app.command("version")
def version() -> None:
    """Print the version."""
    console.print(f"issuebench {__version__}")


def main() -> None:  # pragma: no cover - entry point
    sys.exit(run_guarded(app))


if __name__ == "__main__":  # pragma: no cover
    app()
