"""The `next:` line: every verb that writes what a later verb reads prints the exact command to
run next, with the options that made this one work (a folder of clones, recipes, no sandbox), so
running it as printed works. It is one line, never wrapped, so a copy from a log is the command."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Console

Value = str | Path | bool | int | float | Sequence[str] | None


def how_to_run(argv0: str | None = None, path: str | None = None) -> str:
    """The command a user can type to run issuebench again: plain `issuebench` when it is on PATH
    (as after activating the venv), else the script this process was started as (.venv/bin/issuebench)."""
    script = Path(argv0 if argv0 is not None else sys.argv[0])
    found = shutil.which("issuebench", path=path)
    if script.name != "issuebench" or (found and Path(found).resolve() == script.resolve()):
        return "issuebench"
    try:
        return str(script.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(script.resolve())


def command(verb: str, *args: str | Path, options: Mapping[str, Value] = {}) -> str:
    """`issuebench VERB ARGS --option value ...`, quoted for a shell. An option whose value is None
    or False is left out, True is a bare flag, a list is its items joined by commas."""
    parts = [how_to_run(), *verb.split(), *map(str, args)]
    for name, value in options.items():
        if value is None or value is False:
            continue
        if value is True:
            parts.append(name)
        elif isinstance(value, (list, tuple)):
            parts += [name, ",".join(map(str, value))]
        else:
            parts += [name, str(value)]
    return " ".join(shlex.quote(p) for p in parts)


def say_next(console: Console, line: str, *others: str) -> None:
    """`next: COMMAND` (and `  or: COMMAND` for each other way on), each on one unbroken line."""
    console.print(f"next: {line}", markup=False, highlight=False, soft_wrap=True)
    for other in others:
        console.print(f"  or: {other}", markup=False, highlight=False, soft_wrap=True)
