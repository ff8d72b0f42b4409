"""Loading a dataset for analysis: through issuebench.datasets when present, else JSON/JSONL here."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from issuebench.errors import InputError
from issuebench.models import Task


def load_dataset(source: str | Path) -> list[Task]:
    try:
        from issuebench.datasets import load_tasks
    except ImportError:  # the datasets module is someone else's; read plain files until it exists
        return _load_jsonl(Path(source))
    return load_tasks(source)


def _load_jsonl(path: Path) -> list[Task]:
    if not path.exists():
        raise InputError(path, "no such dataset file")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        records = list(enumerate(json.loads(text), 1))
    else:
        records = [(n, json.loads(line)) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    tasks = []
    for lineno, rec in records:
        try:
            tasks.append(Task.model_validate(rec))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InputError(path, err["msg"], line=lineno, field=".".join(map(str, err["loc"]))) from None
    return tasks
