"""Mend the mistakes models make in diffs without changing what the diff means.

`normalize_patch` is always safe (line ends, final newline). `repair_patch` recomputes every
@@ -a,b +c,d @@ header from the hunk bodies and puts back the space that editors strip from blank
context lines; it is a fallback, tried only after the exact patch failed to apply.
"""

from __future__ import annotations

from issuebench.patch.parse import FilePatch, Hunk, parse_patch


def normalize_patch(text: str) -> str:
    """LF line ends and a final newline: the forms `git apply` parses reliably."""
    text = text.replace("\r\n", "\n")
    if not text.endswith("\n"):
        text += "\n"
    return text


def _render_hunk(hunk: Hunk, new_start: int) -> list[str]:
    body = [line if line else " " for line in hunk.lines]
    old_count = sum(1 for line in body if line[:1] in (" ", "-"))
    new_count = sum(1 for line in body if line[:1] in (" ", "+"))
    old_start = hunk.old_start
    if new_count == 0:  # a pure deletion's new_start names the line before it
        new_start = max(new_start - 1, 0)
    header = f"@@ -{old_start},{old_count} +{new_start},{new_count} @@"
    if hunk.section:
        header += f" {hunk.section}"
    return [header, *body]


def _render_file(fp: FilePatch) -> list[str]:
    if not fp.hunks:
        return fp.text.rstrip("\n").split("\n")
    section = fp.text.split("\n")
    head: list[str] = []
    for line in section:
        if line.startswith("@@"):
            break
        head.append(line)
    out = list(head)
    shift = 0  # how far the new side has drifted from the old side after earlier hunks
    for hunk in fp.hunks:
        old_count = sum(1 for line in hunk.lines if line[:1] in (" ", "-", ""))
        new_count = sum(1 for line in hunk.lines if line[:1] in (" ", "+", ""))
        if fp.is_new or (hunk.old_start == 0 and old_count == 0):
            new_start = 1
        else:
            new_start = hunk.old_start + shift
            if old_count == 0:
                new_start += 1  # a pure insertion's old_start names the line before it
        out.extend(_render_hunk(hunk, new_start))
        shift += new_count - old_count
    return out


def repair_patch(text: str) -> str:
    """The patch with hunk counts recomputed from the bodies. Raises PatchParseError if unparsable."""
    files = parse_patch(normalize_patch(text))
    out: list[str] = []
    for fp in files:
        out.extend(_render_file(fp))
    return "\n".join(out) + "\n"


def needs_repair(text: str) -> bool:
    """True when some hunk's declared counts disagree with its body, or a blank lost its space."""
    try:
        files = parse_patch(normalize_patch(text))
    except ValueError:
        return False
    return any(not h.counts_ok or "" in h.lines for fp in files for h in fp.hunks)
