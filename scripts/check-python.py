"""Stop `make` with one clear line when the bootstrap Python is too old for issuebench."""

import sys

if sys.version_info < (3, 10):  # noqa: UP036 - this file runs on whatever python3 the machine has
    sys.exit(f"issuebench needs Python 3.10 or newer to run (found {sys.version.split()[0]}); "
             "run make with PY_BOOTSTRAP=python3.11 (or any 3.10+ interpreter).")
