"""Which Python to use: what the repository allows, what existed at the date, what is installed."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

from issuebench.envs import installed_pythons, python_table

_CLAUSE = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)?\s*([0-9][0-9a-z.*]*)\s*$")


def _tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text))


def minor_key(version: str) -> tuple[int, int]:
    parts = (*_tuple(version), 0, 0)
    return parts[0], parts[1]


def satisfies(minor: str, specifier: str) -> bool:
    """Does any release of Python `minor` ("3.8") satisfy a requires-python specifier?

    Lower bounds are checked against the newest patch release, upper bounds against the first,
    so ">=3.6.1" admits 3.6 and "<3.8" excludes 3.8. Unparseable clauses are ignored.
    """
    major, mnr = minor_key(minor)
    low, high = (major, mnr, 999), (major, mnr, 0)
    for clause in specifier.split(","):
        clause = clause.strip()
        if not clause:
            continue
        match = _CLAUSE.match(clause)
        if not match:
            continue
        op, text = match.group(1) or "==", match.group(2)
        if text.endswith(".*"):
            prefix = _tuple(text[:-2])
            same = (major, mnr)[: len(prefix)] == prefix[:2] if len(prefix) <= 2 else False
            if (op == "==" and not same) or (op == "!=" and same and len(prefix) == 2):
                return False
            continue
        want = ((*_tuple(text), 0, 0, 0))[:3]
        ok = {
            ">=": low >= want, ">": low > want, "<=": high <= want, "<": high < want,
            "==": (major, mnr) == want[:2], "===": (major, mnr) == want[:2],
            "!=": len(_tuple(text)) > 2 or (major, mnr) != want[:2],
            "~=": low >= want and (major,) == want[:1],
        }[op]
        if not ok:
            return False
    return True


def released_by(minor: str, date: str | None) -> bool:
    """Was Python `minor` released on or before `date` (ISO)? Unknown versions count as released."""
    if not date:
        return True
    released = python_table()["released"].get(minor)
    return released is None or released <= date[:10]


def adopted_by(minor: str, date: str | None) -> bool:
    """Released long enough before `date` for packages to support it."""
    if not date:
        return True
    released = python_table()["released"].get(minor)
    if released is None:
        return True
    days = python_table()["policy"]["adoption_days"]
    cutoff = (dt.date.fromisoformat(date[:10]) - dt.timedelta(days=days)).isoformat()
    return released <= cutoff


def installed_minors() -> list[str]:
    """Minor versions of the interpreters on this machine, newest first."""
    seen: dict[str, None] = {}
    for info in installed_pythons():
        seen.setdefault(info.minor, None)
    return sorted(seen, key=minor_key, reverse=True)


def first_without(module: str) -> str | None:
    """The first Python without a removed standard-library module, if it is one."""
    return python_table()["removed_modules"].get(module.split(".")[0])


def rank_pythons(requires: Iterable[str], ci: Iterable[str], classifiers: Iterable[str],
                 date: str | None, installed: Iterable[str]) -> list[str]:
    """Candidate Pythons, best first.

    Allowed: installed, not older than the policy's oldest, released by the date, within every
    requires-python. Preferred: the newest that CI or classifiers list and that had time to be
    adopted by the date; then the other adopted ones, newest first; then the rest.
    """
    oldest = minor_key(python_table()["policy"]["oldest"])
    requires = [r for r in requires if r]
    allowed = [v for v in installed
               if minor_key(v) >= oldest and released_by(v, date) and all(satisfies(v, r) for r in requires)]
    if not allowed:
        # Nothing fits every constraint: fall back to what is installed and existed at the date.
        allowed = [v for v in installed if minor_key(v) >= oldest and released_by(v, date)]
        if not allowed:
            # Older than every usable interpreter: the one nearest the date comes first (a 2014
            # commit runs on 3.6 far more likely than on 3.13), never one below the policy's oldest.
            usable = [v for v in installed if minor_key(v) >= oldest] or list(installed)
            return sorted(usable, key=minor_key)
    listed = set(ci) | set(classifiers)
    allowed.sort(key=minor_key, reverse=True)

    def score(v: str) -> tuple[int, int, tuple[int, int]]:
        return (int(adopted_by(v, date) or v in listed), int(v in listed), minor_key(v))

    return sorted(allowed, key=score, reverse=True)
