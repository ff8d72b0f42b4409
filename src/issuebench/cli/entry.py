"""The `issuebench` command's first lines: stop signals are set up before the CLI is imported.

Importing the CLI (typer, rich, every verb's module) takes a moment; a Ctrl-C then would
otherwise end in a traceback from deep inside an import. This module imports nothing heavy, so
whatever stops the command from its first instant prints one line and exits 128 + the signal.
"""

from __future__ import annotations

import os
import sys

from issuebench.interrupts import exit_status, raise_on_stop_signals


def main() -> None:
    raise_on_stop_signals()  # SIGHUP and SIGTERM stop as Ctrl-C does, from here on
    try:
        try:
            from issuebench.cli.main import main as cli_main
        except KeyboardInterrupt as stop:
            leave("interrupted", exit_status(stop))
        cli_main()
    finally:
        forget_caught_interrupts()


def forget_caught_interrupts() -> None:
    """Clear CPython's record of a KeyboardInterrupt that left an exec() of source text.

    CPython notes such an interrupt in a process-wide flag (meant for a script's top level) and
    never clears it when the interrupt is caught further up, as ours are; started with
    `python -m`, the interpreter then ends by killing itself with SIGINT whatever status we exit
    with. Ctrl-C lands inside such an exec() whenever it arrives while a dataclass or namedtuple
    is being made (CPython writes their methods as text). Running source text once more resets
    the flag; an interrupt nobody caught is noted again on its way out, after this."""
    exec("")


def leave(line: str, status: int) -> None:
    """Say `line` on stderr and exit; a terminal that is gone (SIGHUP) loses the line, not the status."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except OSError:
        pass
    quiet_closed_streams()
    sys.exit(status)


def quiet_closed_streams() -> None:
    """Point stdout and stderr at /dev/null when their terminal is gone, so that flushing them at
    exit cannot fail (Python would then exit 120, not with the signal's status)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stream.fileno())
                os.close(devnull)
            except (OSError, ValueError):
                pass


if __name__ == "__main__":
    main()
