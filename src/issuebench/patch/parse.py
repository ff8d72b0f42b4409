"""Read unified diffs (git-style or plain) into FilePatch records, tolerant of what models emit.

Models write diffs with wrong hunk counts, blank context lines stripped of their leading space,
CRLF line ends and no final newline. The parser therefore does not trust the @@ counts to find
where a hunk ends: it reads the body by its line prefixes, and records whether the declared counts
matched, so `repair` can fix them and `apply` can avoid tools that would misread them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from issuebench.models import PatchStatus

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
# A header that starts like a hunk but has no usable line numbers ("@@ @@", "@@ -a +b @@").
LOOSE_HUNK_HEADER = re.compile(r"^@@")
DEV_NULL = "/dev/null"


@dataclass
class Hunk:
    old_start: int
    old_count: int          # as declared in the header
    new_start: int
    new_count: int          # as declared in the header
    section: str            # the text after the closing @@ (function context)
    lines: list[str] = field(default_factory=list)   # body lines without line ends
    header_line: int = 0    # 1-based line of the @@ header in the patch text

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.startswith("-"))

    @property
    def actual_old_count(self) -> int:
        """Old-side lines the body really has (blank lines count as context)."""
        return sum(1 for line in self.lines if line[:1] in (" ", "-", ""))

    @property
    def actual_new_count(self) -> int:
        return sum(1 for line in self.lines if line[:1] in (" ", "+", ""))

    @property
    def counts_ok(self) -> bool:
        return (self.old_count, self.new_count) == (self.actual_old_count, self.actual_new_count)


@dataclass
class FilePatch:
    path_old: str | None            # None for a created file
    path_new: str | None            # None for a deleted file
    is_new: bool = False
    is_deleted: bool = False
    is_binary: bool = False
    is_rename: bool = False
    new_mode: str | None = None     # e.g. "100755", "120000" (symlink)
    hunks: list[Hunk] = field(default_factory=list)
    text: str = ""                  # this file's section of the patch, verbatim
    start_line: int = 0             # 1-based line of the section's first line

    @property
    def path(self) -> str:
        """The path the change lands on: the new path, or the old one for a deletion."""
        return self.path_new or self.path_old or ""

    @property
    def added(self) -> int:
        return sum(h.added for h in self.hunks)

    @property
    def removed(self) -> int:
        return sum(h.removed for h in self.hunks)

    @property
    def is_symlink(self) -> bool:
        return self.new_mode == "120000"


class PatchParseError(ValueError):
    """The text is not a unified diff; the message says which line and why."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


def split_lines(text: str) -> list[str]:
    """Lines without their ends; CRLF and lone CR-less text both handled."""
    return text.replace("\r\n", "\n").split("\n")


def _strip_prefix(raw: str) -> str | None:
    """'a/x/y.py' -> 'x/y.py'; '/dev/null' -> None; drops a trailing tab+timestamp."""
    path = raw.split("\t", 1)[0].strip()
    if path.startswith('"') and path.endswith('"') and len(path) >= 2:
        path = path[1:-1]
    if path == DEV_NULL:
        return None
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def _is_file_header_pair(lines: list[str], i: int) -> bool:
    return (lines[i].startswith("--- ") and i + 1 < len(lines)
            and lines[i + 1].startswith("+++ "))


def _starts_section(lines: list[str], i: int) -> bool:
    return lines[i].startswith("diff --git ") or _is_file_header_pair(lines, i)


def _git_header_paths(line: str) -> tuple[str | None, str | None]:
    """Paths from 'diff --git a/x b/x' (best effort; --- / +++ lines win when present)."""
    rest = line[len("diff --git "):]
    match = re.match(r"^(a/.+?) (b/.+)$", rest)
    if match:
        return _strip_prefix(match.group(1)), _strip_prefix(match.group(2))
    parts = rest.split(" ")
    if len(parts) == 2:
        return _strip_prefix(parts[0]), _strip_prefix(parts[1])
    return None, None


def _read_hunk(lines: list[str], i: int, hunk: Hunk) -> int:
    """Consume the body of `hunk` starting at lines[i]; return the index after it.

    While the declared counts still need lines, any body-looking line is taken (so a removed
    line reading '-- x' is not mistaken for a '--- ' header). After that, only lines that cannot
    start a new section are taken, which is how too-small counts get repaired.
    """
    need_old, need_new = hunk.old_count, hunk.new_count
    n = len(lines)
    while i < n:
        line = lines[i]
        declared_left = need_old > 0 or need_new > 0
        if line.startswith("\\"):
            hunk.lines.append(line)
            i += 1
            continue
        if line.startswith("@@") or line.startswith("diff --git "):
            break
        if not declared_left and _is_file_header_pair(lines, i):
            break
        if line == "" and not _more_body_follows(lines, i):
            # Trailing blank lines: context whose space was stripped only when the declared
            # counts ask for exactly that many; otherwise they separate this hunk from the next.
            blanks = 0
            while i + blanks < n and lines[i + blanks] == "":
                blanks += 1
            if need_old == need_new and 0 < need_old <= blanks:
                hunk.lines.extend([""] * need_old)
                i += need_old
            break
        if line == "":
            pass
        elif line[0] not in " +-":
            break
        hunk.lines.append(line)
        kind = line[:1]
        if kind in (" ", "", "-"):
            need_old -= 1
        if kind in (" ", "", "+"):
            need_new -= 1
        i += 1
    return i


def _more_body_follows(lines: list[str], i: int) -> bool:
    """After blank line(s) at i, does the same hunk go on (a context/+/- line, not a header)?"""
    j = i
    while j < len(lines) and lines[j] == "":
        j += 1
    if j >= len(lines):
        return False
    nxt = lines[j]
    if nxt.startswith(("@@", "diff --git ", "\\")) or _is_file_header_pair(lines, j):
        return False
    return nxt[:1] in (" ", "+", "-")


def parse_patch(text: str | None) -> list[FilePatch]:
    """Parse a unified diff into one FilePatch per file. Raises PatchParseError when malformed.

    Each file's section in order: the git header and its extended lines (modes, renames, binary)
    -> the ---/+++ pair -> the hunks -> whatever follows until the next section."""
    if text is None:
        return []
    lines = text.replace("\r\n", "\n").split("\n")
    files: list[FilePatch] = []
    i, n = 0, len(lines)
    while i < n and not _starts_section(lines, i):
        i += 1  # prose or a preamble before the first file: ignored, as git apply does
    while i < n:
        start = i
        fp = FilePatch(path_old=None, path_new=None, start_line=i + 1)
        i = _read_git_header(lines, i, fp)
        i = _read_file_headers(lines, i, fp)
        i = _read_hunks(lines, i, fp)
        # Anything until the next section (e.g. binary data, trailing prose) stays with this file.
        while i < n and not _starts_section(lines, i):
            i += 1
        section_lines = lines[start:i]
        while section_lines and section_lines[-1] == "":
            section_lines.pop()
        # Each hunk of a `GIT binary patch` ends with an empty line: git refuses one without it as
        # corrupt once another file's section follows (mplhep's test patches, a baseline image
        # then its test file, put back together by submodule_moves).
        binary_data = any(line.startswith("GIT binary patch") for line in section_lines)
        fp.text = "\n".join(section_lines) + ("\n\n" if binary_data else "\n")
        if fp.path_old is None and fp.path_new is None:
            raise PatchParseError("file section names no path", start + 1)
        files.append(fp)
    return files


def _read_git_header(lines: list[str], i: int, fp: FilePatch) -> int:
    """'diff --git a/x b/x' and its extended header lines, up to '---' or the next section."""
    if not lines[i].startswith("diff --git "):
        return i
    fp.path_old, fp.path_new = _git_header_paths(lines[i])
    i += 1
    while i < len(lines) and not lines[i].startswith(("--- ", "@@", "diff --git ")):
        line = lines[i]
        if line.startswith("new file mode "):
            fp.is_new = True
            fp.new_mode = line.split()[-1]
        elif line.startswith("deleted file mode "):
            fp.is_deleted = True
        elif line.startswith("new mode "):
            fp.new_mode = line.split()[-1]
        elif line.startswith(("rename from ", "copy from ")):
            fp.is_rename = True
            fp.path_old = line.split(" ", 2)[2]
        elif line.startswith(("rename to ", "copy to ")):
            fp.path_new = line.split(" ", 2)[2]
        elif line.startswith("GIT binary patch") or (
                line.startswith("Binary files ") and line.endswith(" differ")):
            fp.is_binary = True
        i += 1
    return i


def _read_file_headers(lines: list[str], i: int, fp: FilePatch) -> int:
    """The ---/+++ pair (its paths win over the git header's); /dev/null makes a creation or deletion."""
    saw_paths = i < len(lines) and _is_file_header_pair(lines, i)
    if saw_paths:
        fp.path_old = _strip_prefix(lines[i][4:])
        fp.path_new = _strip_prefix(lines[i + 1][4:])
        i += 2
    if saw_paths and fp.path_old is None:
        fp.is_new = True
    if saw_paths and fp.path_new is None:
        fp.is_deleted = True
    if fp.is_new:
        fp.path_old = None
    if fp.is_deleted:
        fp.path_new = None
    return i


def _read_hunks(lines: list[str], i: int, fp: FilePatch) -> int:
    while i < len(lines) and lines[i].startswith("@@"):
        match = HUNK_HEADER.match(lines[i])
        if not match:
            raise PatchParseError(
                f"hunk header without line numbers: {lines[i][:60]!r} "
                "(expected '@@ -start,count +start,count @@')", i + 1)
        old_start, old_count, new_start, new_count, section = match.groups()
        hunk = Hunk(int(old_start), 1 if old_count is None else int(old_count),
                    int(new_start), 1 if new_count is None else int(new_count),
                    section.strip(), header_line=i + 1)
        i = _read_hunk(lines, i + 1, hunk)
        fp.hunks.append(hunk)
    return i


def diagnose_patch(text: str | None) -> tuple[PatchStatus | None, str]:
    """(EMPTY | INVALID | None, reason). None means it looks like a diff worth applying."""
    if text is None or not text.strip():
        return PatchStatus.EMPTY, "the patch is empty"
    try:
        files = parse_patch(text)
    except PatchParseError as exc:
        return PatchStatus.INVALID, f"not a valid unified diff: {exc}"
    if not files:
        return PatchStatus.INVALID, ("not a unified diff: no 'diff --git' or '---'/'+++' file header found")
    for fp in files:
        for path in (fp.path_old, fp.path_new):
            problem = unsafe_path_reason(path)
            if problem:
                return PatchStatus.INVALID, f"line {fp.start_line}: path {path!r} {problem}"
        changes_something = (fp.hunks or fp.is_binary or fp.is_rename or fp.is_new
                             or fp.is_deleted or fp.new_mode)
        if not changes_something:
            return PatchStatus.INVALID, f"line {fp.start_line}: file {fp.path!r} has a header but no hunks"
        for hunk in fp.hunks:
            if not hunk.lines:
                return PatchStatus.INVALID, f"line {hunk.header_line}: hunk has no body"
    return None, ""


def check_patch(text: str | None) -> PatchStatus | None:
    """EMPTY for None/blank, INVALID when it is not a usable unified diff, else None."""
    return diagnose_patch(text)[0]


def unsafe_path_reason(path: str | None) -> str | None:
    """Why a path must not be written by an untrusted patch, or None when it is fine.

    Patches are applied outside the sandbox, so a path that leaves the repository or reaches into
    .git (hooks, config) would let a patch run code on the host at the next git command.
    """
    if path is None:
        return None
    if path.startswith("/") or path.startswith("~"):
        return "is absolute; patches may only touch files inside the repository"
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if ".." in parts:
        return "leaves the repository ('..'); patches may only touch files inside it"
    if any(p.lower() == ".git" for p in parts):
        return "is inside .git; patches may not change git metadata"
    return None
