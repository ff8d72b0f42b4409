"""Prompts from template files: the paper's "patch" style and a "fullfile" style, within a token budget."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from issuebench.errors import IssuebenchError
from issuebench.infer.retrieval import Retrieved
from issuebench.llm import estimate_tokens
from issuebench.models import Task

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
STYLES = ("patch", "fullfile")


@functools.lru_cache(maxsize=8)
def template(style: str) -> str:
    path = TEMPLATE_DIR / f"{style}.txt"
    if style not in STYLES or not path.is_file():
        raise IssuebenchError(f"unknown prompt style {style!r}", hint=f"use --prompt {' or '.join(STYLES)}")
    return path.read_text(encoding="utf-8")


def file_block(path: str, text: str, *, numbered: bool) -> str:
    lines = text.splitlines()
    body = "\n".join(f"{i} {line}" for i, line in enumerate(lines, 1)) if numbered else "\n".join(lines)
    return f"[start of {path}]\n{body}\n[end of {path}]"


@dataclass
class Prompt:
    text: str
    files: list[str] = field(default_factory=list)      # in the prompt, in rank order
    dropped: list[str] = field(default_factory=list)    # retrieved but over the budget
    tokens: int = 0


def build_prompt(task: Task, files: list[Retrieved], *, style: str = "patch",
                 context_tokens: int = 27_000, readme: Retrieved | None = None) -> Prompt:
    """Fill the template with the issue and as many retrieved files, in rank order, as the budget
    holds (a file that does not fit is skipped and a smaller later one may still go in)."""
    tpl = template(style)
    statement = task.problem_statement.strip()
    numbered = style == "patch"  # line numbers help a model write hunks; full files must not carry them
    used = estimate_tokens(tpl) + estimate_tokens(statement)
    blocks, kept, dropped = [], [], []
    for item in ([readme] if readme else []) + files:
        block = file_block(item.path, item.text, numbered=numbered)
        cost = estimate_tokens(block) + 1
        if context_tokens and used + cost > context_tokens:
            dropped.append(item.path)
            continue
        blocks.append(block)
        kept.append(item.path)
        used += cost
    # One pass, so an issue that happens to contain "{{code}}" is left as it is.
    values = {"problem_statement": statement, "code": "\n".join(blocks)}
    text = re.sub(r"\{\{(problem_statement|code)\}\}", lambda m: values[m.group(1)], tpl)
    return Prompt(text=text, files=kept, dropped=dropped, tokens=estimate_tokens(text))
