"""Many small git reads through few processes: files and folders of commits from one
`git cat-file --batch`, nearest tags of many commits from one `git describe`.

Reading versions over a whole history asked git once per file, folder and tag (a process each,
most of collect's time on sympy). The answers here are the same text those commands print:
`show(commit, path)` is `git show commit:path` for a file (empty when missing or not a file),
`ls(commit, path)` is `git ls-tree --name-only commit[:path]` split on whitespace.
"""

from __future__ import annotations

import locale
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from issuebench.errors import IssuebenchError

_HEADER = re.compile(rb"^([0-9a-f]{40,64}) (blob|tree|commit|tag) (\d+)$")
_S_IFMT, _S_IFDIR, _S_IFGITLINK = 0o170000, 0o040000, 0o160000
# ls-tree's C quoting of names with core.quotePath=false: control characters, quote, backslash.
_ESCAPES = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}
_DESCRIBE_CHUNK = 1000  # commits per `git describe` command line
VERSION_TAGS = "*[0-9].[0-9]*"  # tags that may name a release (a digit, a dot, a digit)


def as_text(data: bytes) -> str:
    """Bytes as `subprocess.run(..., text=True, errors="replace")` gives them (what the per-file
    `git show` calls returned): the locale's encoding and universal newlines."""
    text = data.decode(locale.getpreferredencoding(False), "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _quoted(name: bytes) -> bytes:
    if not any(b < 32 or b in (34, 92, 127) for b in name):
        return name
    out = bytearray(b'"')
    for b in name:
        if b in _ESCAPES:
            out += b"\\" + _ESCAPES[b].encode()
        elif b < 32 or b == 127:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return bytes(out + b'"')


class ObjectReader:
    """One `git cat-file --batch` process for every read; trees and file texts are kept by
    object id, so commits that share a folder or a file cost one read of it."""

    def __init__(self, repo_dir: Path) -> None:
        self.repo_dir = repo_dir
        self._proc: subprocess.Popen[bytes] | None = None
        self._roots: dict[str, str | None] = {}  # commit -> its tree's id
        self._trees: dict[str, list[tuple[int, bytes, str]]] = {}  # id -> (mode, name, id)
        self._texts: dict[str, str] = {}  # blob id -> text
        self.requests = 0  # objects asked of git (tests and the benchmark count them)

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.close()
            self._proc.stdout.close()
            self._proc.wait()
            self._proc = None

    def _cat(self, spec: str) -> tuple[str, str, bytes] | None:
        """(id, type, content) of one object, or None when git has no such object."""
        if "\n" in spec:
            return None
        if self._proc is None:
            self._proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.repo_dir,
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self.requests += 1
        try:
            self._proc.stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
            self._proc.stdin.flush()
        except BrokenPipeError as exc:
            raise IssuebenchError(f"git cat-file stopped in {self.repo_dir}",
                                  hint="check that the path is a git repository") from exc
        header = self._proc.stdout.readline()
        match = _HEADER.match(header.rstrip(b"\n"))
        if not match:
            return None  # "<spec> missing" or "<spec> ambiguous"
        size = int(match.group(3))
        data = self._proc.stdout.read(size + 1)[:size]
        return match.group(1).decode(), match.group(2).decode(), data

    def _tree(self, oid: str, data: bytes | None = None) -> list[tuple[int, bytes, str]]:
        if oid not in self._trees:
            if data is None:
                found = self._cat(oid)
                data = found[2] if found else b""
            entries: list[tuple[int, bytes, str]] = []
            width = len(oid) // 2
            pos = 0
            while pos < len(data):
                space = data.index(b" ", pos)
                nul = data.index(b"\0", space)
                entries.append((int(data[pos:space], 8) & _S_IFMT, data[space + 1:nul],
                                data[nul + 1:nul + 1 + width].hex()))
                pos = nul + 1 + width
            self._trees[oid] = entries
        return self._trees[oid]

    def _root(self, commit: str) -> str | None:
        if commit not in self._roots:
            found = self._cat(f"{commit}^{{tree}}")
            self._roots[commit] = found[0] if found and found[1] == "tree" else None
            if found and found[1] == "tree":
                self._tree(found[0], found[2])
        return self._roots[commit]

    def _entry(self, commit: str, path: str) -> tuple[int, str] | None:
        """(file type bits of the mode, id) at `path` of the commit's tree ("" is the tree)."""
        oid = self._root(commit)
        if oid is None:
            return None
        mode = _S_IFDIR
        for part in (p for p in path.split("/") if p):
            if mode != _S_IFDIR:
                return None
            name = part.encode("utf-8", "surrogateescape")
            hit = next(((m, o) for m, n, o in self._tree(oid) if n == name), None)
            if hit is None:
                return None
            mode, oid = hit
        return mode, oid

    def ls(self, commit: str, path: str = "") -> list[str]:
        """`git ls-tree --name-only commit[:path]`, split on whitespace; [] if not a folder."""
        entry = self._entry(commit, path)
        if entry is None or entry[0] != _S_IFDIR:
            return []
        return as_text(b"\n".join(_quoted(name) for _, name, _ in self._tree(entry[1]))).split()

    def show(self, commit: str, path: str) -> str:
        """The text of the file at `path` in the commit; "" when there is none."""
        entry = self._entry(commit, path)
        if entry is None or entry[0] in (_S_IFDIR, _S_IFGITLINK):
            return ""
        oid = entry[1]
        if oid not in self._texts:
            found = self._cat(oid)
            self._texts[oid] = as_text(found[2]) if found and found[1] == "blob" else ""
        return self._texts[oid]


def describe_version_tags(repo_dir: Path, revs: Iterable[str]) -> dict[str, str]:
    """`git describe --tags --abbrev=0 --match "*[0-9].[0-9]*" REV` of each rev ("" where it
    fails), from one process per thousand revs: describe answers each rev on its own line.
    With --always a rev no such tag reaches prints its abbreviated id instead of stopping the
    process; that id holds no dot, every name the pattern admits does. A rev git cannot read
    still stops it: that rev gets "" and the rest are asked again."""
    pending = list(dict.fromkeys(revs))
    out: dict[str, str] = {}
    while pending:
        chunk = pending[:_DESCRIBE_CHUNK]
        proc = subprocess.run(["git", "describe", "--tags", "--abbrev=0", "--always", "--match", VERSION_TAGS,
                               *chunk], cwd=repo_dir, capture_output=True, check=False)
        # Ref names hold no control characters: each answer is one line.
        lines = as_text(proc.stdout).split("\n")[:-1]
        for rev, line in zip(chunk, lines, strict=False):
            out[rev] = line.strip() if "." in line else ""
        done = len(lines)
        if proc.returncode != 0 and done < len(chunk):
            out[chunk[done]] = ""  # the rev it stopped at
            done += 1
        elif done < len(chunk):
            raise IssuebenchError(f"git describe answered {done} of {len(chunk)} commits in {repo_dir}",
                                  hint="check that the repository is complete")
        pending = pending[done:]
    return out
