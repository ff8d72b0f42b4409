"""Find flawed tasks: the Lite selection rules, Verified-style static checks, a dynamic check.

Lite rules (SWE-bench Lite, as the course notes list them), each applied on its own so a reader
sees what every rule keeps and drops. Verified-style checks are heuristics that point a human
reviewer at likely flaws (tests too narrow, tests too wide, underspecified statement); they never
decide alone. The dynamic check runs known-valid alternative fixes through the harness and lists
the ones the tests reject: the strongest evidence that a test is unfair.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from issuebench.analysis.characteristics import count_code_blocks, count_error_messages
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.models import InstanceReport, Prediction, Task
from issuebench.patch import FilePatch, PatchParseError, parse_patch

# ------------------------------------------------------------------ Lite rules

_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)|<img\b", re.IGNORECASE)
_MEDIA_FILE = re.compile(
    r"\w\.(?:png|jpe?g|gif|bmp|tiff?|svg|webp|ico|heif|avif|mp4|avi|mkv|mov|wmv|flv|webm|mpeg)\b", re.IGNORECASE)
_URL = re.compile(r"\bhttps?://[^\s)>\]\"']+|\bwww\.[^\s)>\]\"']+", re.IGNORECASE)
_SHA40 = re.compile(r"(?<![/\w])[0-9a-f]{40}(?!\w)")
_NAMED_COMMIT = re.compile(r"\b(?:commit|changeset|revision|sha)\s*:?\s+`?([0-9a-f]{7,40})\b", re.IGNORECASE)
_ISSUE_REF = re.compile(r"(?:^|[\s(\[,;])(?:gh-|GH-|#)(\d+)\b|\b(?:issue|ticket|pr|pull request)\s+#?(\d{2,})\b",
                        re.IGNORECASE | re.MULTILINE)
_ISSUE_URL = re.compile(r"/(?:issues|pull|pulls|ticket|merge_requests)/\d+")
# Assertions on the text of an error. Warning-message checks (assertWarnsMessage, pytest.warns
# with match=) are not error messages and are left alone, as the published Lite rows show.
_MESSAGE_CHECKS = re.compile(
    r"pytest\.raises\([^\n]*\bmatch\s*=|excinfo\.match\(|assertRaisesRegexp?\(|assertRaisesMessage\(|"
    r"assertOutput\(|checks\.Error\(|str\((?:exc|excinfo|e|err|cm|ctx)(?:info)?\.(?:value|exception)\)")

MIN_WORDS = 40
MAX_HUNKS = 3


def _outside_code(text: str) -> str:
    """Statement text with fenced code and inline code removed (a `#123` in code is not a reference)."""
    text = re.sub(r"(```|~~~).*?(\1|\Z)", " ", text, flags=re.DOTALL)
    return re.sub(r"`[^`\n]*`", " ", text)


def _files(patch: str) -> list[FilePatch]:
    try:
        return parse_patch(patch)
    except PatchParseError:
        return []


def rule_statement_references(task: Task) -> str | None:
    """Images, external links, commit hashes, references to other issues or pull requests."""
    text = task.problem_statement or ""
    reasons = []
    if _MD_IMAGE.search(text) or _MEDIA_FILE.search(_outside_code(text)):
        reasons.append("image")
    own = f"github.com/{task.repo}".lower()
    urls = [u for u in _URL.findall(text)]
    external = [u for u in urls if own not in u.lower()]
    if external:
        reasons.append(f"external link {external[0]}")
    if _SHA40.search(text) or any(re.search(r"\d", m) and re.search(r"[a-f]", m) for m in _NAMED_COMMIT.findall(text)):
        reasons.append("commit hash")
    prose = _outside_code(text)
    ref = _ISSUE_REF.search(prose)
    if ref or any(_ISSUE_URL.search(u) for u in urls):
        reasons.append("reference to another issue or PR" + (f" ({ref.group(0).strip()})" if ref else ""))
    return "; ".join(reasons) or None


def rule_min_words(task: Task) -> str | None:
    words = len((task.problem_statement or "").split())
    return f"{words} words (< {MIN_WORDS})" if words < MIN_WORDS else None


def rule_one_file(task: Task) -> str | None:
    files = _files(task.patch)
    return f"gold patch edits {len(files)} files" if len(files) > 1 else None


def rule_max_hunks(task: Task) -> str | None:
    hunks = sum(len(fp.hunks) for fp in _files(task.patch))
    return f"gold patch has {hunks} hunks (> {MAX_HUNKS})" if hunks > MAX_HUNKS else None


def rule_no_created_or_removed(task: Task) -> str | None:
    files = _files(task.patch)
    made = [fp.path for fp in files if fp.is_new]
    gone = [fp.path for fp in files if fp.is_deleted]
    parts = ([f"creates {', '.join(made)}"] if made else []) + ([f"removes {', '.join(gone)}"] if gone else [])
    return "; ".join(parts) or None


def rule_no_error_message_checks(task: Task) -> str | None:
    # Added and context lines: the tests as they stand after the test patch.
    kept = [line[1:] for fp in _files(task.test_patch) for h in fp.hunks for line in h.lines
            if line[:1] in ("+", " ")]
    for line in kept:
        m = _MESSAGE_CHECKS.search(line)
        if m:
            return f"test checks an error message: {line.strip()[:100]}"
    return None


@dataclass(frozen=True)
class LiteRule:
    name: str
    description: str
    check: Callable[[Task], str | None]


LITE_RULES: list[LiteRule] = [
    LiteRule("statement_references", "no images, external links, commit hashes or references to other issues/PRs",
             rule_statement_references),
    LiteRule("min_words", f"problem statement has at least {MIN_WORDS} words", rule_min_words),
    LiteRule("one_file", "gold patch edits one file", rule_one_file),
    LiteRule("max_hunks", f"gold patch has at most {MAX_HUNKS} hunks", rule_max_hunks),
    LiteRule("no_created_or_removed_files", "gold patch creates or removes no file", rule_no_created_or_removed),
    LiteRule("no_error_message_checks", "tests do not check error messages", rule_no_error_message_checks),
]


@dataclass
class RuleOutcome:
    rule: str
    description: str
    kept: int
    dropped: dict[str, str] = field(default_factory=dict)   # instance id -> why


def apply_lite_rules(tasks: Sequence[Task]) -> tuple[list[RuleOutcome], list[str]]:
    """Each rule on the whole dataset; returns per-rule outcomes and the ids every rule keeps."""
    outcomes = []
    dropped_any: set[str] = set()
    for rule in LITE_RULES:
        out = RuleOutcome(rule.name, rule.description, kept=0)
        for t in tasks:
            why = rule.check(t)
            if why:
                out.dropped[t.instance_id] = why
                dropped_any.add(t.instance_id)
            else:
                out.kept += 1
        outcomes.append(out)
    return outcomes, [t.instance_id for t in tasks if t.instance_id not in dropped_any]


# --------------------------------------------------------- Verified-style checks

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")
_IMPORT = re.compile(r"^\s*from\s+[\w.]+\s+import\s+\(?([^#)]*)|^\s*import\s+([\w., ]+)")
_CALL = re.compile(r"(?<![\w])([A-Za-z_]\w*)\s*\(")
_IGNORED = {"self", "cls", "super", "print", "len", "str", "int", "float", "list", "dict", "set", "tuple", "range",
            "isinstance", "type", "object", "repr", "sorted", "open", "getattr", "setattr", "hasattr", "bool",
            "raises", "warns", "approx", "mark", "parametrize", "fixture", "mock", "patch", "assert", "all", "any",
            "enumerate", "zip", "map", "filter", "min", "max", "sum", "abs", "next", "iter", "format", "join",
            "append", "extend", "update", "get", "items", "keys", "values", "split", "strip", "replace"}
_VAGUE = re.compile(r"\b(?:maybe|perhaps|not sure|i think|i guess|probably|might|would be nice|it would be great|"
                    r"feature request|proposal|suggest|consider|could we|should we|any thoughts|what do you think)\b",
                    re.IGNORECASE)
_EXPECTATION = re.compile(r"\b(?:expected|expect|should (?:be|return|raise|give|not)|instead of|correct(?:ly)?)\b",
                          re.IGNORECASE)


def _mentioned(name: str, statement: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", statement) is not None


def gold_names(patch: str) -> tuple[set[str], set[str]]:
    """(names the gold patch touches, names it introduces): defs/classes in its lines and hunk contexts."""
    touched: set[str] = set()
    added: set[str] = set()
    removed: set[str] = set()
    for fp in _files(patch):
        for h in fp.hunks:
            m = _DEF.match(h.section or "")
            if m:
                touched.add(m.group(1))
            for line in h.lines:
                m = _DEF.match(line[1:])
                if not m:
                    continue
                touched.add(m.group(1))
                if line.startswith("+"):
                    added.add(m.group(1))
                elif line.startswith("-") or line.startswith(" "):
                    removed.add(m.group(1))
    return touched, added - removed


def names_used_by_new_tests(test_patch: str) -> set[str]:
    names: set[str] = set()
    for fp in _files(test_patch):
        for h in fp.hunks:
            for line in h.lines:
                if not line.startswith("+"):
                    continue
                body = line[1:]
                m = _IMPORT.match(body)
                if m:
                    for part in (m.group(1) or m.group(2) or "").split(","):
                        token = part.strip().split(" as ")[0].strip().split(".")[-1]
                        if token:
                            names.add(token)
                names.update(_CALL.findall(body))
                names.update(re.findall(r"\.([A-Za-z_]\w*)\s*\(", body))
    return {n for n in names if len(n) > 2 and n not in _IGNORED and not n.startswith("test")
            and not (n.startswith("__") and n.endswith("__")) and not n.startswith("assert")}


def _test_function(test_id: str) -> str:
    """'a/b.py::C::test_x[1-2]' / 'test_x (mod.C)' / 'test_x' -> 'test_x'."""
    name = test_id.split("::")[-1].split(" (")[0].split("[")[0]
    return name.split(".")[-1].strip()


def _tokens(text: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return {t.lower() for t in re.split(r"[^A-Za-z0-9]+|_", spaced) if len(t) >= 3}


@dataclass
class QualityFindings:
    instance_id: str
    narrow_names: list[str]            # gold-patch names the new tests use and the statement never mentions
    narrow_introduced: list[str]       # of those, names the gold patch itself introduces (strongest sign)
    too_narrow: bool
    unrelated_f2p: list[str]           # FAIL_TO_PASS tests sharing no word with the statement or the fix
    too_wide: bool
    underspecified_score: int          # 0 (clear) .. 3 (severe), like the Verified annotation scale
    underspecified_reasons: list[str]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def underspecification(task: Task) -> tuple[int, list[str]]:
    """A rule-based stand-in for the Verified annotators' 0-3 underspecification label."""
    text = task.problem_statement or ""
    reasons = []
    if len(text.split()) < 60:
        reasons.append("short statement (< 60 words)")
    if not (count_code_blocks(text) or count_error_messages(text) or "`" in text or ">>>" in text):
        reasons.append("no code, example or error message to reproduce")
    touched, _ = gold_names(task.patch)
    files = [fp.path for fp in _files(task.patch)]
    anchored = any(_mentioned(n, text) for n in touched) or any(
        Path(f).name in text or Path(f).stem in text for f in files)
    if not anchored:
        reasons.append("names no file or function the fix edits")
    if len(_VAGUE.findall(text)) >= 2 and not _EXPECTATION.search(text):
        reasons.append("hedged or open-ended, with no stated expected behaviour")
    return min(3, len(reasons)), reasons


def quality_findings(task: Task) -> QualityFindings:
    statement = task.problem_statement or ""
    touched, introduced = gold_names(task.patch)
    used = names_used_by_new_tests(task.test_patch)
    narrow = sorted(n for n in used & (touched | introduced) if not _mentioned(n, statement))
    narrow_new = sorted(n for n in narrow if n in introduced)
    vocabulary = _tokens(statement) | {t for n in touched for t in _tokens(n)} | _tokens(task.patch)
    unrelated = [t for t in task.FAIL_TO_PASS if not (_tokens(_test_function(t)) - {"test"}) & vocabulary]
    score, reasons = underspecification(task)
    return QualityFindings(
        instance_id=task.instance_id, narrow_names=narrow, narrow_introduced=narrow_new,
        too_narrow=bool(narrow_new),
        unrelated_f2p=unrelated,
        # Wide: several failing tests, and at least half of them about nothing the issue or fix names.
        too_wide=len(task.FAIL_TO_PASS) >= 2 and 2 * len(unrelated) >= len(task.FAIL_TO_PASS),
        underspecified_score=score, underspecified_reasons=reasons)


# ------------------------------------------------------------- dynamic check

@dataclass
class RejectedFix:
    instance_id: str
    status: str
    reason: str
    failing_tests: list[str]


Evaluate = Callable[[Sequence[Task], Sequence[Prediction]], Sequence[InstanceReport]]


def harness_evaluator(*, output_dir: Path, run_id: str = "audit-alternatives", **context: Any) -> Evaluate:
    """The real harness as an `Evaluate` callable (imported late: the harness is another part)."""

    def evaluate(tasks: Sequence[Task], predictions: Sequence[Prediction]) -> Sequence[InstanceReport]:

        ctx = build_context(EvalOptions(output_dir=output_dir, run_id=run_id, **context))
        return run_evaluation(tasks, predictions, ctx).reports

    return evaluate


def dynamic_check(tasks: Sequence[Task], alternatives: Sequence[Prediction], evaluate: Evaluate) -> list[RejectedFix]:
    """Valid alternative fixes the tests reject. Every alternative is taken to be a correct fix;
    one that does not resolve its task points at tests that are too narrow (or a broken env:
    the status and reason tell which)."""
    by_id = {t.instance_id: t for t in tasks}
    runnable = [p for p in alternatives if p.instance_id in by_id and not p.is_empty]
    rejected = []
    for rep in evaluate([by_id[p.instance_id] for p in runnable], runnable):
        if rep.resolved:
            continue
        failing = []
        if rep.tests_status is not None:
            failing = rep.tests_status.FAIL_TO_PASS.failure + rep.tests_status.PASS_TO_PASS.failure
        rejected.append(RejectedFix(rep.instance_id, rep.status.value, rep.reason, failing))
    return sorted(rejected, key=lambda r: r.instance_id)
