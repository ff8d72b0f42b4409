"""Find how to install and test a Python repository at a commit: extract, iterate, validate.

`setup_repository(src, commit=..., date=...)` returns a SetupResult whose `spec` is an EnvSpec
recipe; see docs/setup.md.
"""

from issuebench.setup.loop import Attempt, SetupResult, setup_repository

__all__ = ["Attempt", "SetupResult", "setup_repository"]
