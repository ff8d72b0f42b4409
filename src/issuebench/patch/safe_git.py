"""git as the patch engine runs it on an untrusted tree: never running repository-controlled code
(hooks, fsmonitor) while it applies or reads."""

GIT = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]
