"""Load tasks and predictions from every shape the SWE-bench ecosystem uses, with errors that point.

Tasks: .json (a list), .jsonl, .parquet, a folder holding <split>.parquet / .jsonl, the word `demo`,
or a hub name (`SWE-bench/SWE-bench_Lite`, aliases `full`, `lite`, `verified`) when online.
Predictions: .jsonl, .json (a list, or a dict keyed by instance id), or the word `gold`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from issuebench.demo import demo_predictions, demo_tasks
from issuebench.errors import InputError, IssuebenchError
from issuebench.models import Prediction, Task

HUB_ALIASES = {
    "full": "SWE-bench/SWE-bench",
    "lite": "SWE-bench/SWE-bench_Lite",
    "verified": "SWE-bench/SWE-bench_Verified",
}
GOLD_MODEL_NAME = "gold"


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ())) or None
    msg = err.get("msg", "invalid value")
    if err.get("type") == "missing":
        msg = "required field is missing"
    return loc or "?", msg


def _records_from_json_file(path: Path) -> Iterator[tuple[int | None, Any]]:
    """Yield (line number or None, record) from a .json or .jsonl file."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text (byte {exc.start})", hint="give a JSON Lines file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not valid JSON: {exc.msg}", line=exc.lineno,
                             hint="fix the JSON, or use .jsonl with one record per line") from None
        if isinstance(data, dict):
            # A dict keyed by instance id (the predictions convention) or a single record.
            if "instance_id" in data:
                yield None, data
            else:
                for key, value in data.items():
                    if isinstance(value, dict):
                        value = {"instance_id": key, **value}
                    yield None, value
        elif isinstance(data, list):
            for item in data:
                yield None, item
        else:
            raise InputError(path, "expected a JSON list or object at the top level")
        return
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()  # blank lines at the end are how editors and `echo >>` leave a file, not a broken row
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            raise InputError(path, "blank line", line=lineno,
                             hint="remove the blank line: each line must hold one JSON object")
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not valid JSON ({exc.msg} at column {exc.colno})", line=lineno) from None


def _records_from_parquet(path: Path) -> Iterator[tuple[int | None, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(path, f"not a readable parquet file: {str(exc).splitlines()[0][:200]}",
                         hint="download it again, or pass the dataset as .jsonl") from None
    yield from enumerate(table.to_pylist(), start=1)


@dataclass(frozen=True)
class RowRules:
    """What a row must hold beyond the model's own requirements, by what the caller will do."""

    require_tests: bool = True
    needs_checkout: bool = True


def _repo_from_instance_id(instance_id: str) -> str:
    """'astropy__astropy-12907' -> 'astropy/astropy' (the SWE-bench id convention)."""
    stem = instance_id.rsplit("-", 1)[0]
    return stem.replace("__", "/", 1)


# The fields grading reads. A row without them would grade any patch, even an empty diff, as resolved.
TEST_FIELDS = ("FAIL_TO_PASS", "PASS_TO_PASS")


def _check_test_fields(path: Path | str, lineno: int | None, record: dict[str, Any]) -> None:
    rid = record.get("instance_id")
    prefix = f"instance {rid!r}: " if rid else ""
    for name in TEST_FIELDS:
        if record.get(name) is None:
            raise InputError(path, prefix + "required field is missing", line=lineno, field=name,
                             hint="each task needs FAIL_TO_PASS and PASS_TO_PASS (lists of test names; "
                                  "`issuebench validate` computes them)")


def _task_from_record(path: Path | str, lineno: int | None, record: Any, rules: RowRules) -> Task:
    if not isinstance(record, dict):
        raise InputError(path, f"expected an object, got {type(record).__name__}", line=lineno)
    if rules.require_tests:
        _check_test_fields(path, lineno, record)
    if not rules.needs_checkout:
        # Grading saved logs reads no repository: a row without base_commit (or repo) is enough.
        record = {"base_commit": "", "repo": _repo_from_instance_id(str(record.get("instance_id", ""))), **record}
    try:
        task = Task.model_validate(record)
    except ValidationError as exc:
        loc, msg = _first_error(exc)
        rid = record.get("instance_id")
        prefix = f"instance {rid!r}: " if rid else ""
        raise InputError(path, prefix + msg, line=lineno, field=loc) from None
    if rules.require_tests and not task.FAIL_TO_PASS:
        raise InputError(path, f"instance {task.instance_id!r}: the list is empty, so any patch would resolve "
                         "the task", line=lineno, field="FAIL_TO_PASS",
                         hint="list the tests the fix makes pass, or run `issuebench validate` to find them")
    return task


def _load_task_file(path: Path, rules: RowRules) -> list[Task]:
    if path.suffix == ".parquet":
        records: Iterable[tuple[int | None, Any]] = _records_from_parquet(path)
    elif path.suffix in (".json", ".jsonl"):
        records = _records_from_json_file(path)
    else:
        raise InputError(path, f"unknown dataset file type '{path.suffix}'",
                         hint="use .json, .jsonl or .parquet")
    tasks = [_task_from_record(path, lineno, rec, rules) for lineno, rec in records]
    _reject_duplicate_tasks(path, tasks)
    return tasks


def _reject_duplicate_tasks(path: Path | str, tasks: list[Task]) -> None:
    seen: set[str] = set()
    for task in tasks:
        if task.instance_id in seen:
            raise InputError(path, f"duplicate instance_id {task.instance_id!r}", field="instance_id")
        seen.add(task.instance_id)


def _load_hub(name: str, split: str, rules: RowRules) -> list[Task]:
    try:
        from huggingface_hub import snapshot_download  # type: ignore[import-not-found]
    except ImportError:
        raise IssuebenchError(
            f"dataset '{name}' is a hub name, but hub downloads are not available here",
            hint="download the dataset as .jsonl/.parquet and pass the file, or install huggingface_hub",
        ) from None
    try:
        folder = Path(snapshot_download(repo_id=name, repo_type="dataset"))
    except Exception as exc:  # any network or hub failure is one line for the user
        raise IssuebenchError(f"could not download '{name}' from the hub (offline?): {type(exc).__name__}",
                              hint="pass a local .jsonl/.parquet file instead") from None
    return _load_folder(folder, split, rules)


def _load_folder(folder: Path, split: str, rules: RowRules) -> list[Task]:
    candidates = sorted(folder.rglob(f"{split}*.parquet")) or sorted(folder.rglob(f"{split}*.jsonl"))
    if not candidates:
        candidates = sorted(folder.glob("*.jsonl")) + sorted(folder.glob("*.parquet"))
    if not candidates:
        raise InputError(folder, f"no '{split}' split found (.parquet or .jsonl)",
                         hint="pass the file itself, or --split NAME")
    tasks: list[Task] = []
    for file in candidates:
        tasks.extend(_load_task_file(file, rules))
    _reject_duplicate_tasks(folder, tasks)
    return tasks


def load_tasks(source: str | Path, split: str = "test", *, require_tests: bool = True,
               needs_checkout: bool = True) -> list[Task]:
    """Load a dataset. Raises InputError naming the file, line and field of the first bad row.

    require_tests: every row must list its FAIL_TO_PASS (non-empty) and PASS_TO_PASS tests, as
    grading needs; off for candidates that `validate` has yet to give them, and for analysis.
    needs_checkout: rows need repo and base_commit; off for regrading saved logs.
    """
    rules = RowRules(require_tests=require_tests, needs_checkout=needs_checkout)
    text = str(source)
    if text == "demo":

        return demo_tasks()
    path = Path(text)
    if path.is_dir():
        return _load_folder(path, split, rules)
    if path.exists():
        return _load_task_file(path, rules)
    name = HUB_ALIASES.get(text.lower(), text)
    if "/" in name and not path.suffix:
        return _load_hub(name, split, rules)
    raise InputError(path, "no such file or folder",
                     hint="give a .json/.jsonl/.parquet file, a folder, 'demo', or a hub name")


@dataclass
class PredictionSet:
    """Predictions ready to run, plus what was wrong with the input (reported, never fatal per row)."""

    predictions: list[Prediction]
    unknown_ids: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    unnamed: list[str] = field(default_factory=list)  # ids without model_name_or_path: graded as "unknown"


def gold_predictions(tasks: Iterable[Task]) -> list[Prediction]:
    return [Prediction(instance_id=t.instance_id, model_name_or_path=GOLD_MODEL_NAME, model_patch=t.patch)
            for t in tasks]


def load_predictions(source: str | Path, tasks: Iterable[Task], *, allow_duplicates: bool = False) -> PredictionSet:
    """Load predictions; `gold` means each task's own patch.

    Duplicate ids are an error (the reference keeps the last one silently) unless
    allow_duplicates, in which case the last one wins and the ids are reported.
    Ids not in the dataset are listed and skipped.
    """
    tasks = list(tasks)
    if str(source) == GOLD_MODEL_NAME:
        return PredictionSet(gold_predictions(tasks))
    text = str(source)
    if text.startswith("demo:"):

        preds = demo_predictions(text.split(":", 1)[1])
        known = {t.instance_id for t in tasks}
        return PredictionSet([p for p in preds if p.instance_id in known],
                             unknown_ids=[p.instance_id for p in preds if p.instance_id not in known])
    path = Path(text)
    if not path.exists():
        raise InputError(path, "no such predictions file", hint="give a .jsonl or .json file, or the word 'gold'")
    if path.is_dir():
        raise InputError(path, "is a folder, not a predictions file", hint="give a .jsonl or .json file")
    if path.suffix not in (".json", ".jsonl"):
        raise InputError(path, f"unknown predictions file type '{path.suffix}'", hint="use .jsonl or .json")
    by_id: dict[str, Prediction] = {}
    duplicates: list[str] = []
    unnamed: list[str] = []
    first_line: dict[str, int | None] = {}
    for lineno, record in _records_from_json_file(path):
        if not isinstance(record, dict):
            raise InputError(path, f"expected an object, got {type(record).__name__}", line=lineno)
        for key in ("instance_id", "model_patch"):
            if key not in record:
                raise InputError(path, "required field is missing", line=lineno, field=key,
                                 hint="each prediction needs instance_id, model_name_or_path and model_patch")
        try:
            pred = Prediction.model_validate(record)
        except ValidationError as exc:
            loc, msg = _first_error(exc)
            raise InputError(path, msg, line=lineno, field=loc) from None
        if pred.instance_id in by_id:
            if not allow_duplicates:
                where = first_line.get(pred.instance_id)
                raise InputError(path, f"duplicate instance_id {pred.instance_id!r}"
                                 + (f" (first seen on line {where})" if where else ""),
                                 line=lineno, field="instance_id",
                                 hint="remove one of them, or pass --allow-duplicates to keep the last")
            duplicates.append(pred.instance_id)
        by_id[pred.instance_id] = pred
        first_line.setdefault(pred.instance_id, lineno)
        if record.get("model_name_or_path") in (None, ""):
            unnamed.append(pred.instance_id)
    known = {t.instance_id for t in tasks}
    unknown = [i for i in by_id if i not in known]
    return PredictionSet([p for i, p in by_id.items() if i in known], unknown_ids=unknown, duplicates=duplicates,
                         unnamed=[i for i in dict.fromkeys(unnamed) if i in known])


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
