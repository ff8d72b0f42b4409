"""issuebench: real repositories as graded coding tasks, and patches graded against them."""

__version__ = "0.1.0"
# The harness's version as reports show it. Caches do not rely on it being bumped: result keys and
# environment hashes carry a digest of the code that decides them (issuebench.code_digest).
HARNESS_VERSION = "6"
