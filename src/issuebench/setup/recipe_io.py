"""Write a setup result as TOML or JSON (by the file's suffix). A tiny TOML writer: the values
here are strings, numbers, booleans, lists and nested tables, nothing more."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_recipe(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".toml":
        path.write_text(dumps_toml(document), encoding="utf-8")
    else:
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def dumps_toml(document: dict[str, Any]) -> str:
    lines: list[str] = []
    _table(document, [], lines)
    return "\n".join(lines).strip() + "\n"


def _table(table: dict[str, Any], prefix: list[str], lines: list[str]) -> None:
    nested: list[tuple[str, Any]] = []
    for key, value in table.items():
        if value is None:
            continue
        if isinstance(value, dict) or (isinstance(value, list) and value and all(isinstance(v, dict) for v in value)):
            nested.append((key, value))
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in nested:
        path = [*prefix, key]
        if isinstance(value, dict):
            lines += ["", f"[{'.'.join(_key(p) for p in path)}]"]
            _table(value, path, lines)
        else:
            for item in value:
                lines += ["", f"[[{'.'.join(_key(p) for p in path)}]]"]
                _table(item, path, lines)


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)   # JSON string escapes are valid TOML basic-string escapes
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value if v is not None) + "]"
    return json.dumps(str(value))
