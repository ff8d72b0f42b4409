"""Per-instance usage from prediction files: cost, agent steps and how the agent's run ended.

One reader for everything `report` takes from predictions. Prediction files are read here directly
(not through datasets.load_predictions) because a report needs no dataset, and a row's patch does
not matter, only its id, model and usage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from issuebench.errors import InputError

# Keys under `usage` that agents and inference tools use for a dollar cost.
_USAGE_COST_KEYS = ("cost", "total_cost", "cost_usd", "instance_cost", "total_cost_usd")
# The agent's exit status when it stopped on its step limit (agent/loop.py AGENT_STATUSES).
STEP_LIMIT = "step_limit"


@dataclass(frozen=True)
class PredictionUsage:
    """What one prediction row says about its own making; None where the row says nothing."""

    cost: float | None = None
    steps: int | None = None         # model calls of an agent (infer writes 1; gold and others none)
    exit_status: str | None = None   # how the agent's run ended: submitted, step_limit, cost_limit, ...

    @property
    def hit_step_limit(self) -> bool:
        return self.exit_status == STEP_LIMIT

    @property
    def empty(self) -> bool:
        return self.cost is None and self.steps is None and self.exit_status is None


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


def steps_of(record: dict[str, Any]) -> int | None:
    """`steps`, else `usage.steps` (our agent writes both). Not a count (a bool, text, < 0): unknown."""
    value = record.get("steps")
    if value is None and isinstance(record.get("usage"), dict):
        value = record["usage"].get("steps")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
        return None
    return int(value)


def usage_of(record: dict[str, Any]) -> PredictionUsage:
    status = record.get("exit_status")
    return PredictionUsage(cost=cost_of(record), steps=steps_of(record),
                           exit_status=status if isinstance(status, str) and status else None)


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


def read_prediction_usage(path: Path | str) -> dict[str, dict[str, PredictionUsage]]:
    """{model folder name: {instance_id: usage}} for every row that states a cost, steps or an exit status."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such predictions file")
    by_model: dict[str, dict[str, PredictionUsage]] = {}
    for lineno, rec in _records(path):
        if not isinstance(rec, dict):
            raise InputError(path, f"expected an object, got {type(rec).__name__}", line=lineno)
        iid = rec.get("instance_id")
        if not iid:
            raise InputError(path, "required field is missing", line=lineno, field="instance_id")
        usage = usage_of(rec)
        if usage.empty:
            continue
        model = str(rec.get("model_name_or_path") or "unknown").replace("/", "__")
        by_model.setdefault(model, {})[str(iid)] = usage
    return by_model

