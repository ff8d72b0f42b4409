"""The command line: one module per verb group, each with `register(app)`; `main` starts it."""

from issuebench.cli.entry import main

__all__ = [
    "main",
]
