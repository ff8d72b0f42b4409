"""The patch engine: parse, validate, apply with fallbacks, repair, split test/code, stats.

Everything here works on diff text and a working tree; nothing runs repository code.
"""

from issuebench.patch.apply import ApplyResult, apply_patch, strip_level
from issuebench.patch.parse import (
    FilePatch,
    Hunk,
    PatchParseError,
    check_patch,
    diagnose_patch,
    parse_patch,
    unsafe_path_reason,
)
from issuebench.patch.paths import TestPathRules, files_touched, is_test_path, split_patch
from issuebench.patch.repair import needs_repair, normalize_patch, repair_patch
from issuebench.patch.stats import PatchStats, patch_stats
from issuebench.patch.submodule_moves import submodule_moves

__all__ = [
    "ApplyResult",
    "FilePatch",
    "Hunk",
    "PatchParseError",
    "PatchStats",
    "TestPathRules",
    "apply_patch",
    "check_patch",
    "diagnose_patch",
    "files_touched",
    "is_test_path",
    "needs_repair",
    "normalize_patch",
    "parse_patch",
    "patch_stats",
    "repair_patch",
    "split_patch",
    "strip_level",
    "submodule_moves",
    "unsafe_path_reason",
]
