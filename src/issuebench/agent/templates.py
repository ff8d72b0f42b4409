"""The agent's prompts, as files beside this module; `{{name}}` marks where a value goes."""

from __future__ import annotations

import functools
import re
from pathlib import Path

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
_FIELD = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@functools.lru_cache(maxsize=32)
def load(name: str, folder: Path = TEMPLATE_DIR) -> str:
    return (folder / f"{name}.txt").read_text(encoding="utf-8")


def render(template: str, **values: object) -> str:
    """Fill `{{name}}` fields; values are inserted as they are (braces in code stay untouched)."""
    return _FIELD.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)
