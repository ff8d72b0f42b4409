"""Contamination probes: a date split, near-duplicate statements, and perturbed dataset copies.

None of these proves memorization on its own (see docs/analysis.md). A drop after a training
cutoff, a leak through duplicate statements, or a score that survives rewording but not renaming
are clues to weigh together.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from importlib import resources
from pathlib import Path

from issuebench.analysis.audit import gold_names
from issuebench.analysis.runs import RunResults
from issuebench.analysis.stats import Interval, SplitTest, rate_lower_after, wilson
from issuebench.errors import InputError, IssuebenchError
from issuebench.models import Task

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# ------------------------------------------------------------------ date split


@dataclass
class SideRate:
    resolved: int
    total: int
    interval: Interval

    @property
    def rate(self) -> float:
        return self.resolved / self.total if self.total else 0.0


@dataclass
class DateSplit:
    cutoff: str
    before: SideRate
    after: SideRate
    test: SplitTest
    undated: list[str] = field(default_factory=list)


def _parse_date(text: str) -> datetime:
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def date_split(run: RunResults, tasks: Sequence[Task], cutoff: str) -> DateSplit:
    """Rate before vs on-or-after `cutoff` (task created_at), with a one-sided 'lower after' test."""
    try:
        when = _parse_date(cutoff)
    except ValueError:
        raise InputError(None, f"not an ISO date: {cutoff!r}", field="--cutoff", hint="use YYYY-MM-DD") from None
    counts = {"before": [0, 0], "after": [0, 0]}
    undated = []
    for t in tasks:
        res = run.instances.get(t.instance_id)
        if not t.created_at:
            undated.append(t.instance_id)
            continue
        try:
            side = "before" if _parse_date(t.created_at) < when else "after"
        except ValueError:
            undated.append(t.instance_id)
            continue
        counts[side][1] += 1
        counts[side][0] += int(bool(res and res.resolved))
    (kb, nb), (ka, na) = counts["before"], counts["after"]
    return DateSplit(cutoff=cutoff, before=SideRate(kb, nb, wilson(kb, nb)), after=SideRate(ka, na, wilson(ka, na)),
                     test=rate_lower_after(kb, nb, ka, na), undated=undated)


# ------------------------------------------------------------ near-duplicates

_MERSENNE = (1 << 61) - 1


def shingles(text: str, k: int = 5) -> set[str]:
    """Word k-shingles of a normalized text (lower case, punctuation dropped)."""
    words = re.findall(r"[a-z0-9_]+", text.lower())
    if len(words) < k:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i:i + k]) for i in range(len(words) - k + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _h64(s: str) -> int:
    return int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "big")


def minhash(sh: set[str], num_perm: int = 128, seed: int = 1) -> list[int]:
    """MinHash signature with universal hashes (a*x + b) mod p; seeded, so signatures are stable."""
    import random

    rng = random.Random(seed)
    params = [(rng.randrange(1, _MERSENNE), rng.randrange(0, _MERSENNE)) for _ in range(num_perm)]
    base = [_h64(s) for s in sh] or [0]
    return [min((a * x + b) % _MERSENNE for x in base) for a, b in params]


@dataclass
class DuplicatePair:
    a: str
    b: str
    jaccard: float
    identical: bool


def near_duplicates(tasks: Sequence[Task], *, threshold: float = 0.7, k: int = 5, num_perm: int = 128,
                    bands: int = 32) -> list[DuplicatePair]:
    """Pairs of tasks whose statements share most of their shingles.

    MinHash + banding finds candidate pairs without comparing every pair; each candidate is then
    checked with the exact Jaccard similarity, so the threshold is applied exactly.
    """
    rows = num_perm // bands
    sets = {t.instance_id: shingles(t.problem_statement, k) for t in tasks}
    texts = {t.instance_id: " ".join(re.findall(r"[a-z0-9_]+", t.problem_statement.lower())) for t in tasks}
    buckets: dict[tuple[int, tuple[int, ...]], list[str]] = {}
    for iid, sh in sets.items():
        if not sh:
            continue
        sig = minhash(sh, num_perm)
        for band in range(bands):
            buckets.setdefault((band, tuple(sig[band * rows:(band + 1) * rows])), []).append(iid)
    candidates: set[tuple[str, str]] = set()
    for ids in buckets.values():
        for i in range(len(ids)):
            for j in range(i + 1, len(ids)):
                candidates.add(tuple(sorted((ids[i], ids[j]))))  # type: ignore[arg-type]
    pairs = []
    for a, b in sorted(candidates):
        score = jaccard(sets[a], sets[b])
        if score >= threshold:
            pairs.append(DuplicatePair(a, b, score, texts[a] == texts[b]))
    return sorted(pairs, key=lambda p: (-p.jaccard, p.a, p.b))


# ------------------------------------------------------------------ rewording

# Protected spans: fenced code, inline code, URLs, and whole lines that are examples or output.
_PROTECTED = re.compile(
    r"(```|~~~).*?(?:\1|\Z)"                       # fenced blocks
    r"|`[^`\n]*`"                                  # inline code
    r"|\bhttps?://\S+|\bwww\.\S+"                  # links
    r"|^(?:[ ]{4,}|\t)[^\n]*$"                         # indented code
    r"|^\s*(?:>>>|\.\.\.|\$ |In \[|Out\[|File \"|Traceback|E\s{2,})[^\n]*$"   # sessions, tracebacks
    r"|^\s*(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Warning):[^\n]*$",   # exception lines
    re.DOTALL | re.MULTILINE,
)


@lru_cache(maxsize=1)
def _rewording_rules() -> list[tuple[re.Pattern[str], str]]:
    data = tomllib.loads(resources.files("issuebench.analysis").joinpath("templates/rewording.toml")
                         .read_text(encoding="utf-8"))
    rules = []
    for entry in [*data.get("phrase", []), *data.get("word", [])]:
        # Never inside an identifier, a path or a call: no word char, '.', '/', '_' around, no '(' after.
        pattern = re.compile(rf"(?<![\w./-]){re.escape(entry['from'])}(?![\w/(-]|\.\w)", re.IGNORECASE)
        rules.append((pattern, entry["to"]))
    return rules


def _match_case(source: str, replacement: str) -> str:
    if source[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _reword_prose(text: str) -> str:
    for pattern, replacement in _rewording_rules():
        text = pattern.sub(lambda m, r=replacement: _match_case(m.group(0), r), text)
    return text


def reword_statement(text: str) -> str:
    """Deterministic rewording of the prose; code, examples, links and errors are left byte for byte."""
    out, pos = [], 0
    for m in _PROTECTED.finditer(text):
        out.append(_reword_prose(text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_reword_prose(text[pos:]))
    return "".join(out)


def reword_task(task: Task) -> Task:
    return task.model_copy(update={"problem_statement": reword_statement(task.problem_statement)})


# ------------------------------------------------------------------ renaming

_KEYWORDS = {"self", "cls", "None", "True", "False", "test", "main", "init", "setup", "run", "get", "set"}


def _symbol_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")


def _paths_of(patch: str) -> list[str]:
    return re.findall(r"^(?:---|\+\+\+) [ab]/(\S+)", patch, flags=re.MULTILINE)


def choose_symbol(task: Task) -> str | None:
    """A function or class the gold patch touches that the tests or the statement also use.

    Preferred: named in both the statement and the tests; then in either. Names that are part of
    a file path are skipped, since renaming files would move the patch's targets.
    """
    touched, _ = gold_names(task.patch)
    paths = " ".join(_paths_of(task.patch) + _paths_of(task.test_patch))
    best: tuple[int, str] | None = None
    for name in sorted(touched):
        if len(name) < 4 or name in _KEYWORDS or (name.startswith("__") and name.endswith("__")):
            continue
        if _symbol_pattern(name).search(paths):
            continue
        score = 2 * bool(_symbol_pattern(name).search(task.problem_statement)) + bool(
            _symbol_pattern(name).search(task.test_patch))
        if score and (best is None or score > best[0]):
            best = (score, name)
    return best[1] if best else None


def new_name_for(old: str) -> str:
    return f"{old}X" if old[:1].isupper() else f"{old}_rn"


def rename_in_task(task: Task, old: str, new: str) -> Task:
    """The same rename through patch, test patch, statement, hints and test ids."""
    pat = _symbol_pattern(old)
    if pat.search(" ".join(_paths_of(task.patch) + _paths_of(task.test_patch))):
        raise IssuebenchError(f"{task.instance_id}: '{old}' is part of a file path; renaming files is not supported",
                              hint="choose a function or class name")
    return task.model_copy(update={
        "patch": pat.sub(new, task.patch),
        "test_patch": pat.sub(new, task.test_patch),
        "problem_statement": pat.sub(new, task.problem_statement),
        "hints_text": pat.sub(new, task.hints_text),
        "FAIL_TO_PASS": [pat.sub(new, t) for t in task.FAIL_TO_PASS],
        "PASS_TO_PASS": [pat.sub(new, t) for t in task.PASS_TO_PASS],
    })


_GIT_ENV = {"GIT_AUTHOR_NAME": "issuebench", "GIT_AUTHOR_EMAIL": "issuebench@localhost",
            "GIT_COMMITTER_NAME": "issuebench", "GIT_COMMITTER_EMAIL": "issuebench@localhost",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000"}


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env={**os.environ, **_GIT_ENV})
    if proc.returncode != 0:
        raise IssuebenchError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.strip()[:300]}",
                              hint="check that the folder is a git clone holding the task's base_commit")
    return proc.stdout


def rewrite_repository(repo_dir: Path, base_commit: str, old: str, new: str, *, ref: str | None = None) -> str:
    """Commit, on top of base_commit, the same rename through every tracked text file; return its sha.

    Works in a temporary worktree, so the clone's own checkout is untouched. The commit has a fixed
    author and date, so the same inputs give the same sha; `ref` (e.g. refs/issuebench/renamed/<id>)
    keeps it from being garbage-collected.
    """
    pat = _symbol_pattern(old)
    with tempfile.TemporaryDirectory(prefix="issuebench-rename-") as tmp:
        work = Path(tmp) / "wt"
        _git(repo_dir, "worktree", "add", "--detach", str(work), base_commit)
        try:
            for rel in _git(work, "ls-files", "-z").split("\0"):
                if not rel:
                    continue
                path = work / rel
                if path.is_symlink() or not path.is_file():
                    continue
                data = path.read_bytes()
                if b"\0" in data:
                    continue  # binary
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                renamed = pat.sub(new, text)
                if renamed != text:
                    path.write_bytes(renamed.encode("utf-8"))
            _git(work, "add", "-A")
            _git(work, "commit", "--allow-empty", "-q", "--no-verify", "-m", f"issuebench: rename {old} -> {new}")
            sha = _git(work, "rev-parse", "HEAD").strip()
        finally:
            _git(repo_dir, "worktree", "remove", "--force", str(work))
    if ref:
        _git(repo_dir, "update-ref", ref, sha)
    return sha


def rename_task_and_repository(task: Task, repo_dir: Path | None, old: str | None = None,
                               new: str | None = None) -> Task | None:
    """Renamed copy of the task (and its repository at a new base_commit when a clone is given).
    None when no suitable symbol is found."""
    old = old or choose_symbol(task)
    if old is None:
        return None
    new = new or new_name_for(old)
    renamed = rename_in_task(task, old, new)
    if repo_dir is not None:
        sha = rewrite_repository(repo_dir, task.base_commit, old, new,
                                 ref=f"refs/issuebench/renamed/{task.instance_id}")
        renamed = renamed.model_copy(update={"base_commit": sha})
    return renamed
