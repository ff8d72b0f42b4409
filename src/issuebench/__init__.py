"""issuebench: real repositories as graded coding tasks, and patches graded against them."""

__version__ = "0.1.0"
# Bumped whenever a change to the harness can change a verdict: part of every result's cache key.
HARNESS_VERSION = "5"
# Bumped whenever a change to the environment builder can change what an env holds: part of its hash.
ENV_BUILD_RULES = "3"
