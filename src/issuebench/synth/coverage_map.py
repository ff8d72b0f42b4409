"""Which tests execute which lines: one coverage run of the whole suite per commit.

The run happens in the workbench (sandbox, task environment, `coverage` installed there) with a
small pytest plugin that names each test's coverage context by its node id. The data file is
coverage's SQLite database; it is read here with sqlite3, so issuebench itself needs no coverage.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from issuebench import config
from issuebench.synth.workbench import Workbench

OUTSIDE = ""  # the context of code that ran outside any test and any test module's import
COLLECT = "collect:"  # + a test module's node id: code run while that module was imported


def numbits_to_lines(blob: bytes) -> list[int]:
    """coverage's numbits: bit i of byte j set means line j*8+i ran."""
    return [j * 8 + i for j, byte in enumerate(blob) for i in range(8) if byte & (1 << i)]


@dataclass
class CoverageMap:
    # path (relative to the repository root) -> line -> node ids of the tests that ran it
    lines: dict[str, dict[int, set[str]]] = field(default_factory=dict)

    def tests_for(self, path: str, first: int, last: int, all_tests: set[str] | None = None) -> set[str] | None:
        """Tests that run any of lines first..last; None when code outside tests runs them too.

        Code run while a test module is imported (module-level schemas, fixtures built at import)
        counts for every test of that module, taken from `all_tests`; without it, for none.
        """
        found: set[str] = set()
        for line, tests in self.lines.get(path, {}).items():
            if first <= line <= last:
                found |= tests
        if OUTSIDE in found:
            return None
        modules = {t[len(COLLECT):] for t in found if t.startswith(COLLECT)}
        found = {t for t in found if not t.startswith(COLLECT)}
        if modules and all_tests:
            found |= {t for t in all_tests if t.split("::")[0] in modules}
        return found

    def to_json(self) -> dict:
        return {path: {str(line): sorted(tests) for line, tests in by_line.items()}
                for path, by_line in self.lines.items()}

    @classmethod
    def from_json(cls, data: dict) -> CoverageMap:
        return cls({path: {int(line): set(tests) for line, tests in by_line.items()}
                    for path, by_line in data.items()})


def read_coverage_db(db: Path, roots: list[str]) -> CoverageMap:
    """Turn coverage's database into a map, with paths made relative to whichever root they sit in."""
    cmap = CoverageMap()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        files = dict(con.execute("select id, path from file"))
        contexts = dict(con.execute("select id, context from context"))
        for file_id, context_id, blob in con.execute("select file_id, context_id, numbits from line_bits"):
            path = files[file_id]
            rel = next((path[len(r):].lstrip("/") for r in roots if path.startswith(r.rstrip("/") + "/")), None)
            if rel is None:
                continue
            by_line = cmap.lines.setdefault(rel, {})
            for line in numbits_to_lines(blob):
                by_line.setdefault(line, set()).add(contexts[context_id])
    finally:
        con.close()
    return cmap


def map_tests(bench: Workbench, timeout: float):  # -> tuple[CoverageMap, SuiteRun]
    """Run the whole suite once under coverage; the map and the run (its statuses are a baseline)."""
    db = bench.scratch / "covdata"
    db.unlink(missing_ok=True)
    run = bench.run(None, timeout=timeout, coverage=True)
    if not db.exists():
        return CoverageMap(), run
    roots = [config.TESTBED_PATH, str(bench.ws.resolve()), str(bench.ws)]
    return read_coverage_db(db, roots), run


def save(cmap: CoverageMap, path: Path) -> None:
    path.write_text(json.dumps(cmap.to_json()))


def load(path: Path) -> CoverageMap | None:
    try:
        return CoverageMap.from_json(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None
