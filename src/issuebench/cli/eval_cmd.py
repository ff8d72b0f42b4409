"""CLI commands (module owned by one part of the project; see docs/architecture.md)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
