"""The row's own eval_script, read for what it says to build and to run.

A reference eval_script (5.x rows) is, in order: a preamble (`cd /testbed`, `git config`,
`source $NVM_DIR/nvm.sh`, `git status`, `git show`, `git diff <base>`), the reset of the test
files (`git checkout <base> <files>`, `rm -f <files>`), the test patch (`git apply` of a
heredoc), the build steps (`make`, `cmake --build ...`), then the test command between
`: '>>>>> Start Test Output'` and `: '>>>>> End Test Output'`, and the reset again.

The harness does the patching, the reset and the markers itself (with its nonce, outside the
sandbox), so of the script only the build steps and the test command are taken, in a spec with
`commands_from = "row"`: build steps become `pre_test`, the test lines `test_cmd`, run as they are
(`test_directives = "none"`), after the recipe's `script_rewrites` (literal replacements, for what
needs the reference's image: a user, a vendored submodule) are applied to both. Lines that need
what a run here does not have are left out, each with its reason (`RowScript.dropped`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from issuebench.models import EnvSpec, Task

START = ": '>>>>> Start Test Output'"
END = ": '>>>>> End Test Output'"
_HEREDOC = re.compile(r"<<-?\s*'?\"?([A-Za-z_][A-Za-z0-9_]*)'?\"?\s*$")
# The preamble: what the reference's container needs before anything else, nothing a run here needs.
_PREAMBLE = re.compile(r"^(#!|set [-+]\w+|cd /testbed\s*$|git config |source \$NVM_DIR/nvm\.sh|"
                       r"git status\s*$|git show\s*$|git -c core\.fileMode=false diff )")
# The test-file reset before the test patch: the harness resets those files itself.
_RESET = re.compile(r"^(git checkout [0-9a-f]{7,40} |rm -f )")
# Lines the run here cannot honour, and why.
_DROPPED: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^if ! git diff --quiet HEAD -- package\.json"),
     "re-syncs dependencies when a patch changes package.json: that needs the network, and the "
     "environment is built from the base commit's lockfile"),
    (re.compile(r"/swebench/image_assets/"),
     "copies image assets from the reference's image, which a run here does not have"),
]


@dataclass(frozen=True)
class RowScript:
    build: list[str]
    test: list[str]
    dropped: list[tuple[str, str]] = field(default_factory=list)


def parse_eval_script(text: str) -> RowScript | None:
    """The build steps and the test command of an eval_script; None when it has no test markers."""
    lines = (text or "").splitlines()
    if not any(line.strip() == START for line in lines) or not any(line.strip() == END for line in lines):
        return None
    build: list[str] = []
    test: list[str] = []
    dropped: list[tuple[str, str]] = []
    phase = "preamble"
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        stripped = line.strip()
        heredoc = _HEREDOC.search(stripped)
        if heredoc and stripped.startswith("git apply"):
            i = _skip_heredoc(lines, i, heredoc.group(1))   # the test patch: the harness applies it
            phase = "build"
            continue
        if stripped == START:
            phase = "test"
            continue
        if stripped == END:
            break   # what follows only resets the test files again
        if not stripped or (phase == "preamble" and (_PREAMBLE.match(stripped) or _RESET.match(stripped))):
            continue
        if phase == "preamble":
            phase = "build"
        reason = next((why for pattern, why in _DROPPED if pattern.search(stripped)), None)
        if reason is not None:
            dropped.append((stripped, reason))
            continue
        (test if phase == "test" else build).append(line)
    return RowScript(build=build, test=test, dropped=dropped)


def test_patch_end(lines: list[str]) -> int | None:
    """The index of the line after the test patch's heredoc (`git apply ... <<'EOF'`), or None."""
    for i, line in enumerate(lines):
        stripped = line.strip()
        heredoc = _HEREDOC.search(stripped)
        if heredoc and stripped.startswith("git apply"):
            return _skip_heredoc(lines, i + 1, heredoc.group(1))
    return None


def _skip_heredoc(lines: list[str], i: int, terminator: str) -> int:
    while i < len(lines) and lines[i].strip() != terminator:
        i += 1
    return i + 1


def rewrite(line: str, rewrites: dict[str, str]) -> str:
    for old, new in rewrites.items():
        line = line.replace(old, new)
    return line


def with_row_commands(task: Task, spec: EnvSpec) -> EnvSpec:
    """`spec` with the row's build steps and test command when it says `commands_from = "row"` and
    the row has an eval_script with test markers; `spec` unchanged otherwise."""
    if spec.commands_from != "row" or not task.eval_script:
        return spec
    script = parse_eval_script(task.eval_script)
    if script is None:
        return spec
    build = [rewrite(line, spec.script_rewrites) for line in script.build]
    test = [rewrite(line, spec.script_rewrites) for line in script.test]
    build = [line for line in build if line.strip()]
    notes = [*spec.notes, *(f"eval_script: left out `{line[:80]}`: {why}" for line, why in script.dropped)]
    return spec.model_copy(update={"pre_test": [*spec.pre_test, *build], "test_cmd": "\n".join(test),
                                   "test_directives": "none", "notes": notes})
