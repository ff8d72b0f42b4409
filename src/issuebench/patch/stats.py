"""Size of a diff: files, hunks, lines added and removed, files created and deleted."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from issuebench.patch.parse import parse_patch


@dataclass(frozen=True)
class PatchStats:
    files: int = 0
    hunks: int = 0
    added: int = 0
    removed: int = 0
    created: int = 0
    deleted: int = 0

    @property
    def lines_changed(self) -> int:
        return self.added + self.removed

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def patch_stats(text: str | None) -> PatchStats:
    files = parse_patch(text)
    return PatchStats(
        files=len(files),
        hunks=sum(len(fp.hunks) for fp in files),
        added=sum(fp.added for fp in files),
        removed=sum(fp.removed for fp in files),
        created=sum(1 for fp in files if fp.is_new),
        deleted=sum(1 for fp in files if fp.is_deleted),
    )
