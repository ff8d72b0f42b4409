"""Apply an untrusted diff to a working tree: exact first, then fallbacks, never half-applied.

Order, and why:
  1. `git apply --verbose`: exact and atomic (all files or none).
  2. `git apply --3way`: only when the index holds the pre-image blobs the patch names; a conflict
     is rolled back so the tree is as before.
  3. `patch --batch --forward --fuzz=5`: tolerant of moved or slightly different context. Run as a
     dry run first, and for real only when every hunk would apply, with no .rej/.orig files.
     Skipped when hunk counts are wrong (GNU patch can then treat part of a hunk as trailing
     garbage and "succeed" with half a change) and for symlinks (it may follow them).
  4. Hunk-count repair: recompute the @@ counts from the bodies, then `git apply`, then `patch`.
The method that worked is recorded; fuzz or repair gives APPLIED_AFTER_REPAIR.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from issuebench.models import PatchStatus
from issuebench.patch.binary_fill import dataless_binaries, unsafe_target, write_fills
from issuebench.patch.parse import FilePatch, diagnose_patch, parse_patch
from issuebench.patch.repair import normalize_patch, repair_patch
from issuebench.patch.safe_git import GIT

COMMAND_TIMEOUT = 120.0
FUZZ = 5


@dataclass
class ApplyResult:
    status: PatchStatus
    method: str | None
    log: str
    reason: str = ""

    @property
    def applied(self) -> bool:
        return self.status in (PatchStatus.APPLIED, PatchStatus.APPLIED_AFTER_REPAIR)


@dataclass
class _Attempt:
    ok: bool
    output: str


def _run(argv: Sequence[str], cwd: Path) -> _Attempt:
    try:
        proc = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True,
                              errors="replace", timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return _Attempt(False, f"timed out after {COMMAND_TIMEOUT:.0f}s")
    except FileNotFoundError as exc:
        return _Attempt(False, f"command not found: {exc.filename}")
    return _Attempt(proc.returncode == 0, (proc.stdout + proc.stderr).strip())


def strip_level(text: str) -> int:
    """1 when paths carry git's a/ b/ prefixes, else 0."""
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("diff --git "):
            return 1 if line.startswith("diff --git a/") else 0
        if line.startswith(("--- ", "+++ ")):
            path = line[4:].split("\t", 1)[0].strip()
            if path == "/dev/null":
                continue
            return 1 if path.startswith(("a/", "b/")) else 0
    return 1


class _Applier:
    def __init__(self, repo_dir: Path, workdir: Path) -> None:
        self.repo_dir = repo_dir
        self.workdir = workdir
        self.log: list[str] = []
        self._n = 0

    def _write(self, text: str) -> Path:
        # Outside the repository, so the patch file never shows up as an untracked file.
        self._n += 1
        path = self.workdir / f"attempt-{self._n}.diff"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        return path

    def _record(self, label: str, attempt: _Attempt) -> _Attempt:
        verdict = "ok" if attempt.ok else "failed"
        self.log.append(f">>> {label}: {verdict}\n{attempt.output}".rstrip())
        return attempt

    def git_apply(self, text: str, level: int, label: str, *extra: str) -> bool:
        path = self._write(text)
        argv = [*GIT, "apply", "--verbose", "--whitespace=nowarn", f"-p{level}", *extra, str(path)]
        return self._record(label, _run(argv, self.repo_dir)).ok

    def git_apply_3way(self, text: str, files: list[FilePatch], level: int) -> bool:
        if not _index_has_blobs(self.repo_dir, text):
            self.log.append(">>> git apply --3way: skipped (the index lacks the patch's pre-image blobs)")
            return False
        touched = sorted({p for fp in files for p in (fp.path_old, fp.path_new) if p})
        snapshot = _snapshot(self.repo_dir, touched)
        ok = self.git_apply(text, level, "git apply --3way", "--3way")
        # --3way stages what it applies; unstage so the tree looks like any other application.
        _run([*GIT, "reset", "-q", "--", *touched], self.repo_dir)
        if not ok:
            _restore(self.repo_dir, snapshot)
        return ok

    def gnu_patch(self, text: str, level: int, label: str) -> tuple[bool, bool]:
        """(applied, fuzz_was_needed). Dry run first so a failure leaves the tree untouched."""
        path = self._write(text)
        base = ["patch", "--batch", "--forward", f"--fuzz={FUZZ}", f"-p{level}",
                "--no-backup-if-mismatch", "--reject-file=-", "-i", str(path)]
        dry = self._record(f"{label} (dry run)", _run([*base, "--dry-run"], self.repo_dir))
        if not dry.ok:
            return False, False
        real = self._record(label, _run(base, self.repo_dir))
        return real.ok, bool(re.search(r"with fuzz \d+", real.output))


def _index_has_blobs(repo_dir: Path, text: str) -> bool:
    shas = re.findall(r"^index ([0-9a-f]{7,64})\.\.[0-9a-f]{7,64}", text, flags=re.M)
    wanted = [s for s in shas if set(s) != {"0"}]
    if not wanted:
        return False
    return all(_run([*GIT, "cat-file", "-e", f"{sha}^{{blob}}"], repo_dir).ok for sha in wanted)


def _snapshot(repo_dir: Path, paths: list[str]) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for rel in paths:
        target = repo_dir / rel
        out[rel] = target.read_bytes() if target.is_file() and not target.is_symlink() else None
    return out


def _restore(repo_dir: Path, snapshot: dict[str, bytes | None]) -> None:
    for rel, data in snapshot.items():
        target = repo_dir / rel
        if data is None:
            if target.is_file() or target.is_symlink():
                target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def apply_patch(repo_dir: Path, text: str | None, *, binaries_from: Path | None = None) -> ApplyResult:
    """Apply `text` to the tree at `repo_dir`; the tree is unchanged unless the status says applied.

    With `binaries_from` (a repository trusted to hold them: a task's source clone, for its own test
    patch), binary files the diff names without their data are written from its objects once the
    rest applied (binary_fill); a patch of nothing else applies as `binary from objects`."""
    repo_dir = Path(repo_dir)
    status, reason = diagnose_patch(text)
    if status is not None:
        return ApplyResult(status, None, reason, reason)
    assert text is not None
    rest, fills = dataless_binaries(binaries_from, text) if binaries_from else (text, [])
    if not fills or any(unsafe_target(repo_dir, fill.path) for fill in fills):
        return _apply_text(repo_dir, text)  # git apply refuses what cannot be filled, naming the file
    result = _apply_text(repo_dir, rest) if rest.strip() else ApplyResult(PatchStatus.APPLIED, "binary from objects", "")
    if not result.applied:
        return result
    assert binaries_from is not None
    written = write_fills(repo_dir, binaries_from, fills)
    return ApplyResult(result.status, result.method, "\n".join(x for x in (result.log, written) if x), result.reason)


def _apply_text(repo_dir: Path, text: str) -> ApplyResult:
    """The fallbacks of the module docstring, in order, on a diagnosed patch."""
    files = parse_patch(text)
    level = strip_level(text)
    normalized = normalize_patch(text)
    counts_ok = all(h.counts_ok and "" not in h.lines for fp in files for h in fp.hunks)
    gnu_patch_safe = not any(fp.is_symlink or fp.is_binary for fp in files)

    with tempfile.TemporaryDirectory(prefix="issuebench-patch-") as tmp:
        ap = _Applier(repo_dir, Path(tmp))
        if ap.git_apply(normalized, level, "git apply"):
            return ApplyResult(PatchStatus.APPLIED, "git apply", "\n".join(ap.log))
        if "\r\n" in text and ap.git_apply(text if text.endswith("\n") else text + "\n", level,
                                           "git apply (CRLF kept)"):
            return ApplyResult(PatchStatus.APPLIED, "git apply", "\n".join(ap.log))
        if ap.git_apply_3way(normalized, files, level):
            return ApplyResult(PatchStatus.APPLIED, "git apply --3way", "\n".join(ap.log))
        if counts_ok and gnu_patch_safe:
            ok, fuzzed = ap.gnu_patch(normalized, level, f"patch --fuzz={FUZZ}")
            if ok:
                status = PatchStatus.APPLIED_AFTER_REPAIR if fuzzed else PatchStatus.APPLIED
                return ApplyResult(status, f"patch --fuzz={FUZZ}", "\n".join(ap.log))
        repaired = repair_patch(normalized)
        if repaired != normalized:
            if ap.git_apply(repaired, level, "repair + git apply"):
                return ApplyResult(PatchStatus.APPLIED_AFTER_REPAIR, "repair + git apply", "\n".join(ap.log))
            if gnu_patch_safe:
                ok, _ = ap.gnu_patch(repaired, level, f"repair + patch --fuzz={FUZZ}")
                if ok:
                    return ApplyResult(PatchStatus.APPLIED_AFTER_REPAIR, f"repair + patch --fuzz={FUZZ}",
                                       "\n".join(ap.log))
        else:
            ap.log.append(">>> repair: hunk counts already match their bodies; nothing to repair")
        log = "\n".join(ap.log)
        return ApplyResult(PatchStatus.DOES_NOT_APPLY, None, log, _failure_reason(log))


def _failure_reason(log: str) -> str:
    """The first concrete complaint from the tools, for the report's one-line reason."""
    for line in log.splitlines():
        low = line.lower()
        if low.startswith("error:") or "does not apply" in low or "corrupt patch" in low or (
                "hunk #" in low and "failed" in low) or "can't find file" in low:
            return f"patch does not apply: {line.strip()}"
    return "patch does not apply with git apply, git apply --3way, patch --fuzz, or after repair"
