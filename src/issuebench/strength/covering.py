"""The "covering" scope: the tests whose coverage contexts touch a line the gold or candidate patch changed.

The whole suite runs under coverage.py recording one dynamic context per test function, once
under the gold patch (shared by every prediction for the task) and once under the candidate; a
short script run right after, in the same sandbox, prints the contexts of the lines that side's
patch changed (new-side line numbers in that side's own tree, so they are exact). The tests
named on either side are compared between the two runs, as in the other scopes.

This needs coverage.py inside the task's environment (many recipes install it with pytest-cov);
without it the scope falls back to "modules" and says so in the result's notes.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace
from pathlib import Path, PurePosixPath

from issuebench.files import write_text_atomic
from issuebench.harness import EvalContext, InstanceLog, run_tests
from issuebench.models import EnvSpec, InstanceStatus, Prediction, Task, TestStatus, stable_hash
from issuebench.strength.select import changed_code
from issuebench.strength.wider_checks import confirm, finish, pool_check, pool_spec, select_targets

MARK = "IBCOVER"
# Inside the sandbox, whose /tmp is private to the run.
_DATA = "/tmp/.issuebench-coverage"
_RC = "/tmp/.issuebench-coveragerc"
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def coverage_command(test_cmd: str) -> str:
    """`test_cmd` run under `python -m coverage run` (a runner script, a module or pytest)."""
    parts = shlex.split(test_cmd)
    prefix = []
    while parts and _ASSIGN.match(parts[0]):
        prefix.append(parts.pop(0))
    if not parts:
        return test_cmd
    head = PurePosixPath(parts[0]).name
    if head.startswith("python") and len(parts) > 2 and parts[1] == "-m":
        rest = ["-m", *parts[2:]]
    elif head.startswith("python"):
        rest = parts[1:]
    elif head in ("pytest", "py.test"):
        rest = ["-m", "pytest", *parts[1:]]
    else:
        rest = parts  # a runner script such as bin/test or tests/runtests.py
    return " ".join([*prefix, "python", "-m", "coverage", "run", *map(shlex.quote, rest)])


def covering_spec(spec: EnvSpec, lines: dict[str, set[int]]) -> EnvSpec:
    """The suite under coverage, then a script that prints the contexts of `lines` (file -> lines)."""
    want = json.dumps({f: sorted(ls) for f, ls in lines.items()})
    rc = f"printf '[run]\\ndynamic_context = test_function\\ndata_file = {_DATA}\\n' > {_RC}"
    script = (
        "import json, os, coverage\n"
        f"want = json.loads({want!r})\n"
        f"data = coverage.CoverageData(basename={_DATA!r}); data.read()\n"
        "seen = set()\n"
        "for path in data.measured_files():\n"
        "    rel = os.path.relpath(path, os.getcwd())\n"
        "    if rel not in want: continue\n"
        "    by_line = data.contexts_by_lineno(path)\n"
        "    for line in want[rel]:\n"
        "        seen.update(c for c in by_line.get(line, []) if c)\n"
        f"for c in sorted(seen): print({MARK!r}, c)\n"
    )
    cmd = (f"{rc}; COVERAGE_RCFILE={_RC} {coverage_command(spec.test_cmd)}; rc=$?; "
           f"python - <<'IBEOF'\n{script}IBEOF\nexit $rc")
    return spec.model_copy(update={"test_cmd": cmd, "test_directives": "none"})


def contexts_in(output: str) -> set[str]:
    return {line.split(" ", 1)[1].strip() for line in output.splitlines() if line.startswith(MARK + " ")}


def _dotted(test_id: str) -> str:
    """A test id as coverage's test_function context ends: module.Class.function."""
    if "::" in test_id:
        path, *names = test_id.split("::")
        names = [n.split("[", 1)[0] for n in names]
        return ".".join([PurePosixPath(path).stem, *names])
    return test_id.split("[", 1)[0].split(" ", 1)[0]


def covering_tests(status_map: dict[str, TestStatus], contexts: set[str]) -> list[str]:
    """Test ids of `status_map` named by a coverage context (matched on the dotted tail)."""
    out = []
    for test_id in status_map:
        tail = _dotted(test_id)
        if any(c == tail or c.endswith("." + tail) for c in contexts):
            out.append(test_id)
    return sorted(out)


def file_of(test_id: str) -> str | None:
    return test_id.split("::", 1)[0] if "::" in test_id else None


def covering_check(task: Task, prediction: Prediction, ctx: EvalContext, spec: EnvSpec, source: Path,
                   gold_runs, base):
    """The suite under coverage twice, under gold (contexts of gold's lines, shared by every
    prediction for the task) and under the candidate (contexts of its own lines); the tests either
    names are compared between the two runs."""

    inst_dir = ctx.layout.instance_dir(prediction.model_name_or_path, task.instance_id)
    gold_spec = covering_spec(spec, changed_code(task.patch).lines)
    cand_spec = covering_spec(spec, changed_code(prediction.model_patch).lines)
    log = InstanceLog(inst_dir / "wider_tests.log")
    try:
        key = stable_hash(["covering", task.content_hash(), gold_spec.content_hash()])
        gold = gold_runs.get(key, lambda: run_tests(task, task.patch, ctx, spec=gold_spec, log=log))
        write_text_atomic(inst_dir / "wider_coverage_output.txt", gold.output)
        gold_contexts = contexts_in(gold.output)
        if gold.status is not InstanceStatus.UNRESOLVED or not gold_contexts:
            why = ("coverage.py is not in the task's environment" if "No module named coverage" in gold.output
                   else f"the coverage run gave no contexts ({gold.status.value})")
            result = pool_check(task, prediction, ctx, spec, select_targets(task, prediction, source, "modules"),
                                 gold_runs, base, inst_dir)
            result.notes.append(f"covering fell back to modules: {why}")
            return result
        cand = run_tests(task, prediction.model_patch, ctx, spec=cand_spec, log=log)
        write_text_atomic(inst_dir / "wider_candidate_output.txt", cand.output)
        graded = {*task.FAIL_TO_PASS, *task.PASS_TO_PASS}
        # Candidate contexts come from a run of the candidate's code, which could print fake ones:
        # they can only add tests to the comparison, never hide one that gold's coverage names.
        named = {*covering_tests(gold.status_map, gold_contexts),
                 *covering_tests(cand.status_map, contexts_in(cand.output))}
        tests = sorted(t for t in named if t not in graded)
        if not tests:
            base.status, base.reason = "skipped", "no test beyond the graded lists covers the changed lines"
            return base
        files = sorted({f for t in tests if (f := file_of(t))})
        # A copy: the gold run is shared with every other prediction for the task.
        gold = replace(gold, status_map={t: s for t, s in gold.status_map.items() if t in set(tests)})
        # The confirming rerun runs the covering tests' files (the suite for runners without file ids).
        result = confirm(finish(base, gold, cand, task, files), task, prediction, ctx,
                         pool_spec(spec, files if files else None), log)
    finally:
        log.close()
    result.notes.append(f"{len(tests)} test(s) beyond the graded lists cover the changed lines")
    return result
