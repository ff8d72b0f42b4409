"""Start a Python command that Ctrl-C can reach, whatever the test run inherited.

A shell that starts a job in the background (`make test &`, `nohup ... &`) sets SIGINT to
ignored for it, and an ignored signal stays ignored through fork and exec, so an `issuebench`
started by such a test run would never see the SIGINT a test sends it. The command goes
through a trampoline that puts SIGINT back to its default before exec'ing the real Python,
which then turns it into KeyboardInterrupt as it does under a terminal.
"""

from __future__ import annotations

import sys

_TRAMPOLINE = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
               "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def interruptible(*python_args: str) -> list[str]:
    """argv for `python <python_args>` in which SIGINT has its default disposition."""
    return [sys.executable, "-c", _TRAMPOLINE, *python_args]
