"""Start a Python command that Ctrl-C can reach, whatever the test run inherited.

A shell that starts a job in the background (`make test &`, `nohup ... &`) sets SIGINT to
ignored for it, and an ignored signal stays ignored through fork and exec, so an `issuebench`
started by such a test run would never see the SIGINT a test sends it. The command goes
through a trampoline that puts SIGINT back to its default before exec'ing the real Python,
which then turns it into KeyboardInterrupt as it does under a terminal. SIGHUP likewise: under
`nohup make test` it is ignored, and an ignored SIGHUP is kept ignored by the command (as nohup
asks), so a test of closing the terminal would see nothing stop.
"""

from __future__ import annotations

import sys

_RESET = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
_HANGUP = "signal.signal(signal.SIGHUP, signal.SIG_DFL); "
_EXEC = "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"


def interruptible(*python_args: str, hangup: bool = True) -> list[str]:
    """argv for `python <python_args>` in which SIGINT (and, unless `hangup` is False: a test of
    nohup itself, SIGHUP) has its default disposition."""
    return [sys.executable, "-c", _RESET + (_HANGUP if hangup else "") + _EXEC, *python_args]
