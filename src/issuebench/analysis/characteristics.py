"""Dataset characteristics in the style of the SetupAgent paper (section 4.2, Table 7).

Issue description quality: words, code blocks, error messages, files the statement mentions that
the fix edits, and the overlap between the statement and the fix (longest common string, lines in
common). Fix complexity: lines, files and hunks the gold patch edits, and FAIL_TO_PASS / PASS_TO_PASS
counts. With a run, each characteristic's Spearman correlation with success, with its p-value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

from issuebench.analysis.stats import spearman
from issuebench.models import Task
from issuebench.patch import PatchParseError, parse_patch

_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)
# A line that states an exception: 'ValueError: ...', 'django.core.exceptions.FieldError: ...',
# 'E   TypeError: ...' (pytest), or a traceback header.
_ERROR_LINE = re.compile(
    r"^(?:E\s+)?\s*(?:Traceback \(most recent call last\)|(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit)\b:?)",
    re.MULTILINE,
)
# Lines shorter than this are too generic ('return x', '}') to count as shared with the statement.
_MIN_SHARED_LINE = 10

# Characteristics that need the gold patch or the tests (the paper's "with ground truth" group).
NEEDS_SOLUTION = ("files_mentioned", "longest_overlap", "lines_in_common", "lines_edited",
                  "files_edited", "hunks", "fail_to_pass", "pass_to_pass")


@dataclass
class Characteristics:
    instance_id: str
    repo: str
    words: int
    code_blocks: int
    error_messages: int
    files_mentioned: int      # files the gold patch edits that the statement names (path or file name)
    longest_overlap: int      # characters of the longest string common to statement and gold patch code
    lines_in_common: int      # gold patch code lines (stripped, >= 10 chars) that appear in the statement
    lines_edited: int
    files_edited: int
    hunks: int
    fail_to_pass: int
    pass_to_pass: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


NUMERIC = [f for f in Characteristics.__dataclass_fields__ if f not in ("instance_id", "repo")]


def count_code_blocks(text: str) -> int:
    """Fenced blocks (``` or ~~~ pairs); an unclosed fence still opened one block."""
    fences = len(_FENCE.findall(text))
    return (fences + 1) // 2


def count_error_messages(text: str) -> int:
    return len(_ERROR_LINE.findall(text))


def longest_common_substring(a: str, b: str) -> int:
    """Length of the longest common substring, linear time (a suffix automaton of `a`)."""
    if not a or not b:
        return 0
    link = [-1]
    length = [0]
    trans: list[dict[str, int]] = [{}]
    last = 0
    for ch in a:
        cur = len(length)
        length.append(length[last] + 1)
        link.append(-1)
        trans.append({})
        p = last
        while p != -1 and ch not in trans[p]:
            trans[p][ch] = cur
            p = link[p]
        if p == -1:
            link[cur] = 0
        else:
            q = trans[p][ch]
            if length[p] + 1 == length[q]:
                link[cur] = q
            else:
                clone = len(length)
                length.append(length[p] + 1)
                link.append(link[q])
                trans.append(dict(trans[q]))
                while p != -1 and trans[p].get(ch) == q:
                    trans[p][ch] = clone
                    p = link[p]
                link[q] = clone
                link[cur] = clone
        last = cur
    best = state = cur_len = 0
    for ch in b:
        while state and ch not in trans[state]:
            state = link[state]
            cur_len = length[state]
        if ch in trans[state]:
            state = trans[state][ch]
            cur_len += 1
        best = max(best, cur_len)
    return best


def _patch_files(text: str):
    try:
        return parse_patch(text)
    except PatchParseError:
        return []


def code_lines(patch: str) -> list[str]:
    """The lines the gold patch adds or removes, without their +/- marks."""
    return [line[1:] for fp in _patch_files(patch) for h in fp.hunks for line in h.lines
            if line[:1] in "+-" and line[:1] != ""]


def files_mentioned(statement: str, paths: Sequence[str]) -> int:
    n = 0
    for path in paths:
        name = PurePosixPath(path).name
        if path in statement or re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", statement):
            n += 1
    return n


def characterize(task: Task) -> Characteristics:
    statement = task.problem_statement or ""
    files = _patch_files(task.patch)
    changed = code_lines(task.patch)
    fix_text = "\n".join(changed)
    shared_lines = {line.strip() for line in changed if len(line.strip()) >= _MIN_SHARED_LINE}
    return Characteristics(
        instance_id=task.instance_id,
        repo=task.repo,
        words=len(statement.split()),
        code_blocks=count_code_blocks(statement),
        error_messages=count_error_messages(statement),
        files_mentioned=files_mentioned(statement, [fp.path for fp in files]),
        longest_overlap=longest_common_substring(statement, fix_text),
        lines_in_common=sum(1 for line in shared_lines if line in statement),
        lines_edited=sum(fp.added + fp.removed for fp in files),
        files_edited=len(files),
        hunks=sum(len(fp.hunks) for fp in files),
        fail_to_pass=len(task.FAIL_TO_PASS),
        pass_to_pass=len(task.PASS_TO_PASS),
    )


@dataclass
class CharacteristicCorrelation:
    name: str
    needs_solution: bool
    rho: float | None
    p_value: float | None
    n: int
    mean_resolved: float | None
    mean_unresolved: float | None


def correlate_with_success(rows: Sequence[Characteristics], resolved: dict[str, bool]) -> list[CharacteristicCorrelation]:
    """Spearman's rho of each characteristic with success (1 resolved, 0 not) over tasks in both."""
    paired = [(r, resolved[r.instance_id]) for r in rows if r.instance_id in resolved]
    out = []
    for name in NUMERIC:
        xs = [float(getattr(r, name)) for r, _ in paired]
        ys = [1.0 if ok else 0.0 for _, ok in paired]
        corr = spearman(xs, ys)
        yes = [x for x, y in zip(xs, ys, strict=True) if y]
        no = [x for x, y in zip(xs, ys, strict=True) if not y]
        out.append(CharacteristicCorrelation(
            name=name, needs_solution=name in NEEDS_SOLUTION, rho=corr.rho, p_value=corr.p_value, n=corr.n,
            mean_resolved=sum(yes) / len(yes) if yes else None, mean_unresolved=sum(no) / len(no) if no else None))
    return out


def means(rows: Sequence[Characteristics]) -> dict[str, float]:
    if not rows:
        return {}
    return {name: sum(getattr(r, name) for r in rows) / len(rows) for name in NUMERIC}
