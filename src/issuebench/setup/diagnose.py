"""DIAGNOSE: classify a failed build or test log by the signature table in data/diagnose.toml."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from issuebench.setup.data import load
from issuebench.setup.log_regex import compile_log_pattern

KINDS = ("python_version", "missing_module", "build_failure", "incompatible_dependency",
         "pytest_option", "test_collection_error", "test_command_wrong", "tests_failed", "needs_network")
_TAIL_LINES = 600


@dataclass
class Diagnosis:
    """What went wrong: a kind, the rule that may fix it, its arguments and the evidence."""

    kind: str
    fix: str
    args: dict[str, Any] = field(default_factory=dict)
    # Every value of each named group over the whole log (e.g. all missing modules at once).
    found: dict[str, list[str]] = field(default_factory=dict)
    line: str = ""
    excerpt: str = ""


@functools.cache
def _patterns() -> list[tuple[Any, dict[str, Any]]]:
    out = []
    for entry in load("diagnose")["pattern"]:
        args = {k: v for k, v in entry.items() if k not in ("regex",)}
        # RE2: a log is untrusted text, and the table's patterns must not backtrack over it.
        out.append((compile_log_pattern(entry["regex"]), args))
    return out


def diagnose(log: str) -> Diagnosis | None:
    """The first signature (in table order) found in the log's tail; None when none matches."""
    text = tail(log)
    for regex, args in _patterns():
        match = regex.search(text)
        if not match:
            continue
        found: dict[str, list[str]] = {}
        for other in regex.finditer(text):
            for key, value in other.groupdict().items():
                if value and value not in found.setdefault(key, []):
                    found[key].append(value)
        kind = args["kind"]
        rule_args = {k: v for k, v in args.items() if k not in ("kind", "fix")}
        return Diagnosis(kind=kind, fix=args["fix"], args=rule_args, found=found,
                         line=_line_at(text, match.start()), excerpt=excerpt(text, match.start()))
    return None


def tail(log: str, lines: int = _TAIL_LINES) -> str:
    parts = log.splitlines()
    return "\n".join(parts[-lines:])


def excerpt(text: str, position: int | None = None, limit: int = 2500) -> str:
    """The part of a log worth showing: around `position`, else the end."""
    if position is None:
        return text[-limit:]
    start = text.rfind("\n", 0, max(0, position - limit // 2)) + 1
    return text[start:start + limit]


def _line_at(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start:end if end >= 0 else None].strip()[:300]
