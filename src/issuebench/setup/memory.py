"""REMEMBER: accepted recipes in sqlite, keyed by repository and commit date.

A later setup of the same repository tries the recipe of the nearest date first (SetupAgent's
reference database): neighbouring commits nearly always install the same way.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from issuebench import config
from issuebench.models import EnvSpec

_SCHEMA = """
CREATE TABLE IF NOT EXISTS recipes (
    repo TEXT NOT NULL,
    commit_sha TEXT NOT NULL DEFAULT '',
    date TEXT NOT NULL DEFAULT '',
    spec TEXT NOT NULL,
    runner TEXT NOT NULL,
    test_args TEXT NOT NULL DEFAULT '[]',
    tests_run INTEGER NOT NULL DEFAULT 0,
    tests_passed INTEGER NOT NULL DEFAULT 0,
    saved_at TEXT NOT NULL,
    PRIMARY KEY (repo, commit_sha, date)
)
"""


@dataclass
class Remembered:
    repo: str
    commit: str
    date: str
    spec: EnvSpec
    runner: str
    test_args: list[str]
    tests_run: int
    tests_passed: int


def default_path() -> Path:

    return config.home() / "setup.sqlite"


class RecipeMemory:
    """One sqlite file; every call opens its own connection, so parallel setups can share it."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def save(self, repo: str, commit: str | None, date: str | None, spec: EnvSpec, runner: str,
             test_args: list[str], tests_run: int, tests_passed: int) -> None:
        with closing(self._connect()) as db, db:
            db.execute(
                "INSERT OR REPLACE INTO recipes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (repo, commit or "", (date or "")[:10], spec.model_dump_json(), runner, json.dumps(test_args),
                 tests_run, tests_passed, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))

    def nearest(self, repo: str, date: str | None, limit: int = 2) -> list[Remembered]:
        """Recipes of this repository, nearest date first (newest first when date is unknown)."""
        with closing(self._connect()) as db:
            if date:
                rows = db.execute(
                    "SELECT * FROM recipes WHERE repo = ? ORDER BY "
                    "abs(julianday(coalesce(nullif(date, ''), '1970-01-01')) - julianday(?)), saved_at DESC "
                    "LIMIT ?", (repo, date[:10], limit)).fetchall()
            else:
                rows = db.execute("SELECT * FROM recipes WHERE repo = ? ORDER BY date DESC LIMIT ?",
                                  (repo, limit)).fetchall()
        return [Remembered(repo=r[0], commit=r[1], date=r[2], spec=EnvSpec.model_validate_json(r[3]),
                           runner=r[4], test_args=json.loads(r[5]), tests_run=r[6], tests_passed=r[7])
                for r in rows]
