"""What every command shares: one console, and errors shown as one clear line, never a traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from issuebench.errors import IssuebenchError

console = Console()
err_console = Console(stderr=True, soft_wrap=True)  # ids and paths in messages stay whole

F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(func: F) -> F:
    """Decorate a command so an IssuebenchError prints as `error: ...` and exits 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except IssuebenchError as exc:
            # soft_wrap: a path or field name in an error is never broken across lines.
            err_console.print(f"[bold red]error:[/] {exc.message}", highlight=False, soft_wrap=True)
            if exc.hint:
                err_console.print(f"  [yellow]hint:[/] {exc.hint}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def run_guarded(app: typer.Typer) -> int:
    try:
        app()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        err_console.print(str(exc.code))
        return 1
    return 0
