"""PR mirror: undo a past change on today's tree. For each recent commit, every function it
changed that is still exactly as that commit left it gets its earlier body back."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

from issuebench.synth.base import Candidate, Change, SynthContext
from issuebench.synth.source import Function, functions


def _git(repo: Path, *args: str) -> str | None:
    proc = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(repo), *args], capture_output=True,
                          text=True)
    return proc.stdout if proc.returncode == 0 else None


def _texts(path: str, source: str) -> dict[str, tuple[Function, str]]:
    try:
        fns = functions(path, source)
    except SyntaxError:
        return {}
    out = {}
    for fn in fns:
        first, last = fn.lines
        out[fn.qualname] = (fn, "".join(fn.index.lines[first - 1:last]))
    return out


class PRMirror:
    name = "pr_mirror"
    phase = "single"

    def candidates(self, ctx: SynthContext) -> Iterator[Candidate]:
        if ctx.git_dir is None:
            return
        depth = int(ctx.options.get("mirror_commits", 50))
        log = _git(ctx.git_dir, "log", "--first-parent", "--format=%H %P", f"-n{depth}", ctx.commit) or ""
        for line in log.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            commit, parent = parts[0], parts[1]
            names = _git(ctx.git_dir, "diff", "--name-only", parent, commit) or ""
            for path in names.split():
                if path not in ctx.files:
                    continue
                yield from self._mirror(ctx, path, commit, parent)

    def _mirror(self, ctx: SynthContext, path: str, commit: str, parent: str) -> Iterator[Candidate]:
        at_commit = _git(ctx.git_dir, "show", f"{commit}:{path}")  # type: ignore[arg-type]
        at_parent = _git(ctx.git_dir, "show", f"{parent}:{path}")  # type: ignore[arg-type]
        if at_commit is None or at_parent is None:
            return
        today = ctx.files[path]
        now, then, before = _texts(path, today), _texts(path, at_commit), _texts(path, at_parent)
        lines = today.splitlines(keepends=True)
        for qual, (fn, text) in now.items():
            if qual not in then or qual not in before or not ctx.wanted(fn):
                continue
            if then[qual][1] != text or before[qual][1] == text:
                continue  # changed since that commit, or that commit did not change it
            first, last = fn.lines
            after = "".join(lines[:first - 1]) + before[qual][1] + "".join(lines[last:])
            yield Candidate(self.name, [Change(path, today, after)], [(path, qual, *fn.body_lines)],
                            f"undo {commit[:10]} in {qual}")
