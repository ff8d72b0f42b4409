"""Find how to install and test a Python (or JavaScript) repository at a commit: extract, iterate, validate.

`setup_repository(src, commit=..., date=...)` returns a SetupResult whose `spec` is an EnvSpec
recipe; see docs/setup.md.
"""

from issuebench.setup.any_language import setup_repository
from issuebench.setup.fallback import fallback_spec, remember, remember_recipe, remembered, remembered_spec
from issuebench.setup.fingerprint import setup_fingerprint
from issuebench.setup.js_setup import suite_paths
from issuebench.setup.lockfile_pins import lock_pinned
from issuebench.setup.loop import TEST_TIMEOUT, TIME_LIMIT, Attempt, SetupResult
from issuebench.setup.recipe_io import write_recipe
from issuebench.setup.runner import FILE_BUDGET, import_failure

__all__ = [
    "FILE_BUDGET",
    "TEST_TIMEOUT",
    "TIME_LIMIT",
    "Attempt",
    "SetupResult",
    "fallback_spec",
    "import_failure",
    "lock_pinned",
    "remember",
    "remember_recipe",
    "remembered",
    "remembered_spec",
    "setup_fingerprint",
    "setup_repository",
    "suite_paths",
    "write_recipe",
]
