"""Per-instance cost from prediction files: a `cost` field, or a cost inside `usage`.

Prediction files are read here directly (not through datasets.load_predictions) because a cost
report needs no dataset, and a row's patch does not matter, only its id, model and cost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from issuebench.errors import InputError

# Keys under `usage` that agents and inference tools use for a dollar cost.
_USAGE_COST_KEYS = ("cost", "total_cost", "cost_usd", "instance_cost", "total_cost_usd")


def cost_of(record: dict[str, Any]) -> float | None:
    value = record.get("cost")
    if value is None and isinstance(record.get("usage"), dict):
        usage = record["usage"]
        value = next((usage[k] for k in _USAGE_COST_KEYS if usage.get(k) is not None), None)
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _records(path: Path) -> list[tuple[int | None, Any]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        out = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append((lineno, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(path, f"not valid JSON: {exc.msg}", line=lineno) from None
        return out
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    if isinstance(data, dict):
        data = [dict(v, instance_id=v.get("instance_id", k)) for k, v in data.items() if isinstance(v, dict)]
    if not isinstance(data, list):
        raise InputError(path, "expected a list of predictions or an object keyed by instance id")
    return [(None, r) for r in data]


def read_prediction_costs(path: Path | str) -> dict[str, dict[str, float]]:
    """{model folder name: {instance_id: cost}} for every row that states a cost."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such predictions file")
    by_model: dict[str, dict[str, float]] = {}
    for lineno, rec in _records(path):
        if not isinstance(rec, dict):
            raise InputError(path, f"expected an object, got {type(rec).__name__}", line=lineno)
        iid = rec.get("instance_id")
        if not iid:
            raise InputError(path, "required field is missing", line=lineno, field="instance_id")
        cost = cost_of(rec)
        if cost is None:
            continue
        model = str(rec.get("model_name_or_path") or "unknown").replace("/", "__")
        by_model.setdefault(model, {})[str(iid)] = cost
    return by_model
