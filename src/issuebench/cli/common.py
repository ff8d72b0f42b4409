"""What every command shares: one console, and errors shown as one clear line, never a traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperOption

from issuebench.errors import IssuebenchError, OptionError

console = Console()
err_console = Console(stderr=True, soft_wrap=True)  # ids and paths in messages stay whole

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

_typer_type_label = TyperOption.display_type_rich


def _type_label(self: TyperOption, ctx: Any) -> str | None:
    # Typer labels every flag "<bool>"; a flag takes no value, so its help shows none.
    return None if self.is_flag else _typer_type_label(self, ctx)


TyperOption.display_type_rich = _type_label  # type: ignore[method-assign]


def friendly_errors(func: F) -> F:
    """Decorate a command so an IssuebenchError prints as `error: ...` and exits 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except IssuebenchError as exc:
            # soft_wrap: a path or field name in an error is never broken across lines.
            # escape: a message may hold brackets (`issuebench[ray]`, a path) that are not markup.
            err_console.print(f"[bold red]error:[/] {escape(exc.message)}", highlight=False, soft_wrap=True)
            if exc.hint:
                err_console.print(f"  [yellow]hint:[/] {escape(exc.hint)}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt as exc:  # a run's driver says what it kept (harness.run.RunInterrupted)
            raise say_interrupted(exc, str(exc) or "interrupted") from None

    return wrapper  # type: ignore[return-value]


def say_interrupted(stop: BaseException, line: str) -> typer.Exit:
    """Print the one line an interrupted command leaves; return the Exit with 128 + the signal.

    After SIGHUP the terminal may be gone: the line is then lost, and the exit status is not."""
    from issuebench.cli.entry import quiet_closed_streams
    from issuebench.interrupts import exit_status

    try:
        err_console.print(line, highlight=False, markup=False)
    except OSError:
        pass
    quiet_closed_streams()
    return typer.Exit(exit_status(stop))


def check_choice(option: str, value: str, allowed: tuple[str, ...]) -> str:
    """One line naming the option and its choices, before any work starts."""
    if value not in allowed:
        raise OptionError(option, f"unknown value {value!r}", hint=f"use one of: {', '.join(allowed)}")
    return value


def check_positive(option: str, value: float | None, *, integer: bool = False) -> None:
    """Counts and durations must be above zero (None means the default)."""
    if value is not None and value <= 0:
        what = "a whole number of 1 or more" if integer else "a number of seconds above 0"
        raise OptionError(option, f"must be {what}, got {value:g}")


CLONES = "a folder of local clones (DIR/owner__name or DIR/owner/name)"


def check_folder(option: str, path: Path | None, what: str = CLONES) -> None:
    """A folder option names a folder that is there. A mistyped --repos-dir was once ignored: eval
    then went to the network for every repository (offline, every instance ended `error`)."""
    if path is None:
        return
    if not path.exists():
        problem = "does not exist"
    elif not path.is_dir():
        problem = "is a file, not a folder"
    else:
        return
    raise OptionError(option, f"{path} {problem}; pass {what}")


def pick_instances(tasks: list[T], instance_ids: list[str] | None) -> list[T]:
    """The tasks --instance-ids names (all without it); an id not in the dataset is said once, and
    none left is an error before any work."""
    if not instance_ids:
        return tasks
    known = {t.instance_id for t in tasks}  # type: ignore[attr-defined]
    absent = [i for i in instance_ids if i not in known]
    if absent:
        err_console.print(f"[yellow]warning:[/] --instance-ids not in the dataset: {escape(', '.join(absent))}",
                          highlight=False)
    chosen = [t for t in tasks if t.instance_id in set(instance_ids)]  # type: ignore[attr-defined]
    if not chosen:
        raise OptionError("--instance-ids", "none of the ids given is in the dataset",
                          hint="check the ids against the dataset's instance_id field")
    return chosen


def run_guarded(app: typer.Typer) -> int:
    try:
        app()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        err_console.print(str(exc.code))
        return 1
    return 0
