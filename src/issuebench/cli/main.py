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
    "agent_cmd",
    "infer_cmd",
    "synth_cmd",
    "serve_cmd",
]

for _name in _COMMAND_MODULES:
    importlib.import_module(f"issuebench.cli.{_name}").register(app)


@app.command("version")
def version() -> None:
    """Print the version."""
    console.print(f"issuebench {__version__}")


def _print_version(value: bool) -> None:
    if value:
        console.print(f"issuebench {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(
    show_version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                      help="Print the version and exit."),
) -> None:
    """Turn real repositories into graded coding tasks, and grade patches against them."""


# Options that take one or more values after the flag, as the reference's `--instance_ids a b c`.
MULTI_VALUE_OPTIONS = ("--instance-ids", "--instance_ids", "-i")


def expand_multi_value_options(argv: list[str]) -> list[str]:
    """Turn `--instance-ids a b c` into `--instance-ids a --instance-ids b --instance-ids c`."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in MULTI_VALUE_OPTIONS:
            flag = "--instance-ids" if arg in ("--instance_ids", "-i") else arg
            i += 1
            while i < len(argv) and not argv[i].startswith("-"):
                out += [flag, argv[i]]
                i += 1
            continue
        out.append(arg)
        i += 1
    return out


def main() -> None:  # pragma: no cover - entry point
    sys.argv[1:] = expand_multi_value_options(sys.argv[1:])
    sys.exit(run_guarded(app))


if __name__ == "__main__":  # pragma: no cover
    main()
