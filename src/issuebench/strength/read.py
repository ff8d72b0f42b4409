"""Read what a wider-tests pass left behind, for `report` and the HTML page.

Two places hold it: the run summary's `wider_tests` section, and each instance folder's
`wider_tests.json` (a folder of instance folders has no summary). Either is enough.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from issuebench.strength.wider import RESULT_FILE


@dataclass
class WiderCounts:
    scope: str
    checked: int
    breaking: dict[str, list[str]] = field(default_factory=dict)  # instance id -> tests it breaks


def _load(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def wider_counts(source: Path, instance_ids: list[str]) -> WiderCounts | None:
    """The pass's findings for a run read from `source` (a summary file or a system folder), if any."""
    source = Path(source)
    if source.is_file():
        section = (_load(source) or {}).get("wider_tests")
        if not isinstance(section, dict):
            return None
        return WiderCounts(str(section.get("scope", "?")), int(section.get("checked_instances", 0)),
                           {k: list(v) for k, v in (section.get("breaks") or {}).items()})
    found = [d for i in instance_ids if (d := _load(source / i / RESULT_FILE)) is not None]
    if not found:
        return None
    return WiderCounts(str(found[0].get("scope", "?")), sum(1 for d in found if d.get("status") == "checked"),
                       {d["instance_id"]: list(d["breaks"]) for d in found if d.get("breaks")})
