"""`infer`: retrieve, prompt, ask the model once, extract the patch, check that it applies.

Writes DIR/preds.jsonl (what `eval` takes as it is), DIR/prompts/<id>.json (the messages sent,
the answer, the files and what became of the patch) and, when asked, DIR/text.jsonl: the tasks
with the prompt as a `text` column, like the published BM25 and oracle datasets.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from issuebench.errors import IssuebenchError
from issuebench.executors import Failure, LocalExecutor, drive
from issuebench.files import write_json
from issuebench.infer.check import apply_check
from issuebench.infer.extract import extract_patch
from issuebench.infer.prompts import Prompt, build_prompt
from issuebench.infer.repo_files import read_paths
from issuebench.infer.retrieval import Retrieved, get_retriever
from issuebench.llm import Model, ModelAPIError
from issuebench.models import Task
from issuebench.predictions_file import PredictionsFile
from issuebench.repos import find_repo

CANDIDATES = 50          # files ranked before the token budget picks what fits
READMES = ("README.md", "README.rst", "README.txt", "README")


@dataclass
class InferConfig:
    retrieval: str = "bm25"
    context_tokens: int = 27_000
    style: str = "patch"
    readme: bool = True
    repos_dir: Path | None = None
    allow_clone: bool = True
    workspaces_dir: Path | None = None


@dataclass
class InferResult:
    output: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def make_prompt(task: Task, source: Path, cfg: InferConfig) -> Prompt:
    files = get_retriever(cfg.retrieval).retrieve(task, source, CANDIDATES)
    readme = None
    if cfg.readme:
        found = read_paths(str(source), task.base_commit, READMES)
        name = next((n for n in READMES if n in found), None)
        readme = Retrieved(name, found[name]) if name else None
    return build_prompt(task, files, style=cfg.style, context_tokens=cfg.context_tokens, readme=readme)


def messages_of(prompt: Prompt) -> list[dict[str, str]]:
    """As the reference's inference: the prompt's first line is the system message, the rest the user's."""
    first, _, rest = prompt.text.partition("\n")
    return [{"role": "system", "content": first}, {"role": "user", "content": rest}]


def infer_one(task: Task, model: Model | None, cfg: InferConfig) -> dict[str, Any]:
    """One instance's record. Faults of the machinery give a status, never an exception."""
    rec: dict[str, Any] = {"instance_id": task.instance_id, "model": model.name if model else None,
                           "retrieval": cfg.retrieval, "style": cfg.style}
    try:
        source = find_repo(task.repo, cfg.repos_dir, allow_clone=cfg.allow_clone)
        prompt = make_prompt(task, source, cfg)
    except IssuebenchError as exc:
        return {**rec, "status": "no_context", "reason": exc.message}
    rec.update(files=prompt.files, dropped=prompt.dropped, prompt_tokens_estimate=prompt.tokens,
               text=prompt.text)
    if model is None:
        return {**rec, "status": "prompt_only"}
    messages = messages_of(prompt)
    rec["messages"] = messages
    try:
        reply = model.query(messages)
    except ModelAPIError as exc:
        return {**rec, "status": "api_error", "reason": f"{exc.message} ({exc.kind})"}
    rec.update(reply=reply.content, usage=reply.usage.as_dict(), cost=reply.cost)

    def read(path: str) -> str | None:
        return read_paths(str(source), task.base_commit, [path]).get(path)

    found = extract_patch(reply.content, read)
    rec.update(extraction=found.method, extraction_notes=found.notes, raw_patch=found.patch)
    check = apply_check(source, task.base_commit, found.patch, cfg.workspaces_dir)
    rec.update(status="predicted", apply_check=check.status, apply_method=check.method,
               apply_reason=check.reason, patch=check.patch)
    return rec


def prediction_row(rec: dict[str, Any]) -> dict[str, Any]:
    return {"instance_id": rec["instance_id"], "model_name_or_path": rec["model"], "model_patch": rec["patch"],
            "cost": round(rec.get("cost") or 0.0, 8), "usage": {**(rec.get("usage") or {}), "steps": 1},
            "steps": 1, "extraction": rec["extraction"], "apply_check": rec["apply_check"]}


def text_row(task: Task, rec: dict[str, Any]) -> dict[str, Any]:
    row = task.model_dump(mode="json", exclude_none=True, exclude={"env"})
    return {**row, "text": rec["text"]}


def run_infer(tasks: Iterable[Task], model: Model | None, output: Path, cfg: InferConfig, *,
              workers: int = 1, resume: bool = True, write_text: bool = False,
              on_result: Callable[[dict[str, Any]], None] | None = None) -> InferResult:
    output = Path(output)
    (output / "prompts").mkdir(parents=True, exist_ok=True)
    preds, text_path = PredictionsFile(output / "preds.jsonl"), output / "text.jsonl"
    result = InferResult(output)
    done = preds.ids() if resume and model is not None else set()
    tasks = list(tasks)
    todo = [t for t in tasks if t.instance_id not in done]
    result.skipped = [t.instance_id for t in tasks if t.instance_id in done]
    if model is not None:  # one row per instance: those asked again lose their old one (--no-resume)
        preds.make_room(t.instance_id for t in todo)
    if write_text and not resume:
        text_path.unlink(missing_ok=True)
    have_text = _ids(text_path) if write_text else set()

    def finish(task: Task, rec: dict[str, Any]) -> None:
        write_json(output / "prompts" / f"{task.instance_id.replace('/', '__')}.json", rec)
        if rec.get("status") == "predicted":
            preds.append(prediction_row(rec))
        if write_text and "text" in rec and task.instance_id not in have_text:
            _append(text_path, text_row(task, rec))

    def handle(index: int, rec: dict[str, Any] | Failure) -> None:
        task = todo[index]
        if isinstance(rec, Failure):  # the machinery failed (infer_one gives faults a status)
            rec = {"instance_id": task.instance_id, "model": model.name if model else None, "status": "error",
                   "reason": f"harness error: {rec.reason}"}
        finish(task, rec)
        result.records.append(rec)
        if on_result:
            on_result(rec)

    drive(LocalExecutor(max(1, workers)), partial(infer_one, model=model, cfg=cfg), todo, handle)
    order = {t.instance_id: i for i, t in enumerate(todo)}
    result.records.sort(key=lambda r: order[r["instance_id"]])
    return result


def _append(path: Path, row: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _ids(path: Path) -> set[str]:
    if not path.is_file():
        return set()
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.add(json.loads(line)["instance_id"])
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # a line cut by a kill: that instance runs again
    return out
