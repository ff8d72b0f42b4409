"""A patch out of a model's answer: <patch> tags, fenced or bare diffs, search/replace blocks,
or whole files; the last two become diffs against the files at the base commit."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

_PATCH_TAGS = re.compile(r"<patch>\s*\n?(.*?)(?:</patch>|\Z)", re.DOTALL)
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_SEARCH_REPLACE = re.compile(
    r"(?:^|\n)(?P<path>[^\n`<>=]+?)[ \t]*\n(?:```[^\n]*\n)?<<<<<<< SEARCH\n(?P<search>.*?)\n?=======\n"
    r"(?P<replace>.*?)\n?>>>>>>> REPLACE", re.DOTALL)
_FULL_FILE = re.compile(r"\[start of (?P<path>[^\]\n]+)\]\n(?P<body>.*?)\n?\[end of (?P=path)\]", re.DOTALL)
_DIFF_START = re.compile(r"^(diff --git |--- (?:a/|/dev/null))", re.MULTILINE)


@dataclass
class Extraction:
    patch: str
    method: str                      # patch_tags | fenced_diff | bare_diff | search_replace | full_files | none
    notes: list[str] = field(default_factory=list)


def _looks_like_diff(text: str) -> bool:
    return bool(_DIFF_START.search(text)) and "\n+++ " in "\n" + text


def _strip_fence(text: str) -> str:
    m = _FENCE.search(text)
    return m.group(2) if m and text.strip().startswith("```") else text


def _finish(text: str) -> str:
    text = text.strip("\n")
    return text + "\n" if text else ""


def unified_diff(path: str, old: str | None, new: str) -> str:
    """A git-style diff turning `old` (None: a new file) into `new`; empty when nothing changes."""
    if old == new:
        return ""
    a, b = (old or "").splitlines(keepends=True), new.splitlines(keepends=True)
    header = f"diff --git a/{path} b/{path}\n" + ("new file mode 100644\n" if old is None else "")
    body = difflib.unified_diff(a, b, "/dev/null" if old is None else f"a/{path}", f"b/{path}")
    out = []
    for line in body:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return header + "".join(out) if out else ""


def _apply_search_replace(reply: str, read: Callable[[str], str | None], notes: list[str]) -> str:
    edited: dict[str, str | None] = {}
    originals: dict[str, str | None] = {}
    for m in _SEARCH_REPLACE.finditer(reply):
        path = m.group("path").strip().strip("`*").removeprefix("a/").removeprefix("b/")
        if path not in edited:
            originals[path] = edited[path] = read(path)
        current, search, replace = edited[path], m.group("search"), m.group("replace")
        if current is None:
            if search.strip():
                notes.append(f"search/replace on a file that does not exist: {path}")
                continue
            edited[path] = replace + "\n"
        elif search and search in current:
            edited[path] = current.replace(search, replace, 1)
        elif not search.strip():
            edited[path] = current + replace + "\n"
        else:
            notes.append(f"search text not found in {path}")
    return "".join(unified_diff(p, originals[p], new) for p, new in edited.items() if new is not None)


def _full_files(reply: str, read: Callable[[str], str | None]) -> str:
    chunks = []
    for m in _FULL_FILE.finditer(reply):
        path = m.group("path").strip()
        body = m.group("body")
        chunks.append(unified_diff(path, read(path), body if body.endswith("\n") else body + "\n"))
    return "".join(chunks)


def extract_patch(reply: str, read: Callable[[str], str | None] = lambda _p: None) -> Extraction:
    """The patch in `reply`. `read(path)` gives a file's text at the base commit (None: absent)."""
    tagged = [_strip_fence(m.group(1)) for m in _PATCH_TAGS.finditer(reply)]
    tagged = [t for t in tagged if _looks_like_diff(t)]
    if tagged:
        return Extraction(_finish("\n".join(t.strip("\n") for t in tagged)), "patch_tags")
    fenced = [m.group(2) for m in _FENCE.finditer(reply) if _looks_like_diff(m.group(2))]
    if fenced:
        return Extraction(_finish("\n".join(f.strip("\n") for f in fenced)), "fenced_diff")
    notes: list[str] = []
    if "<<<<<<< SEARCH" in reply:
        patch = _apply_search_replace(reply, read, notes)
        return Extraction(patch, "search_replace" if patch else "none", notes)
    if "[start of " in reply:
        patch = _full_files(reply, read)
        if patch:
            return Extraction(patch, "full_files")
    start = _DIFF_START.search(reply)
    if start and _looks_like_diff(reply[start.start():]):
        return Extraction(_finish(reply[start.start():]), "bare_diff")
    return Extraction("", "none", ["no patch found in the answer"])
