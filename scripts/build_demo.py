"""Build the embedded demo dataset: three small projects, their git bundles, 12 tasks, predictions.

Run from the repository root:

    .venv/bin/python scripts/build_demo.py [--python PATH ...] [--check]

Each project is a real git repository made here from its sources in scripts/demo_projects/ (see
demo_source.py), with a linear history and fixed dates, so the commit ids are the same on every run. The bugs live in that history and the
fixes never do: a task's gold patch and test patch are written as edits on the base commit and
turned into diffs by git. FAIL_TO_PASS and PASS_TO_PASS come from running the tests (test patch
only, then test patch + gold) and parsing the output with issuebench's own "unittest" parser.
Every prediction in mixed.jsonl is applied with issuebench's patch engine and graded with its
grading rules, and the status it gets is written to expected_mixed.json, so the expectations are
measured, not hoped for. Extra `--python` interpreters re-run every task and must agree.

`--check` rebuilds into a temporary folder and fails if the result differs from the committed data.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from demo_source import Edit, Mixed, Project, TaskDef, load_projects  # beside this script

from issuebench.grading import grade
from issuebench.harness.commands import test_command
from issuebench.models import EnvSpec, InstanceStatus, PatchStatus, TestStatus
from issuebench.parsers import get_parser
from issuebench.patch import apply_patch, files_touched, is_test_path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "src" / "issuebench" / "demo" / "data"
OWNER = "issuebench-demo"

# Nothing is installed: the projects have no dependencies and import from src/ via PYTHONPATH,
# so the environment builds offline. No date cutoff, so every task shares one environment.
DEMO_ENV = EnvSpec(
    python="3.11",
    seed_pip=False,
    packages=[],
    install=[],
    test_cmd="python -m unittest -v",
    test_directives="paths",
    log_parser="unittest",
    env_vars={"PYTHONPATH": "src"},
    exclude_newer_source="none",
    notes=["issuebench demo project: standard library only, tests use unittest"],
)


# --------------------------------------------------------------------------------------------
# Building: repositories, diffs, test runs, verdicts.
# --------------------------------------------------------------------------------------------

PARSE = get_parser("unittest")


class BuildError(Exception):
    pass


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
                "LC_ALL": "C", "TZ": "UTC"}
    proc = subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", *args],
                          cwd=cwd, env={**base_env, **(env or {})}, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr}")
    return proc.stdout


def build_repository(project: Project, dest: Path) -> list[str]:
    """Create the project's repository with its whole history; return the commit ids in order."""
    dest.mkdir(parents=True)
    git(dest, "init", "--quiet", "--initial-branch=main")
    name, email = project.author[:-1].split(" <")
    shas = []
    for commit in project.commits:
        for rel, content in commit.files.items():
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        git(dest, "add", "--all")
        identity = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": commit.date,
                    "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": commit.date}
        git(dest, "commit", "--quiet", "--message", commit.message, env=identity)
        shas.append(git(dest, "rev-parse", "HEAD").strip())
        if commit.tag:
            git(dest, "tag", commit.tag)
    return shas


def checkout(repo: Path, sha: str, dest: Path) -> Path:
    git(repo.parent, "clone", "--quiet", "--shared", "--no-checkout", str(repo), str(dest))
    git(dest, "checkout", "--quiet", "--detach", sha)
    return dest


def apply_edits(tree: Path, edits: list[Edit]) -> None:
    for edit in edits:
        path = tree / edit.path
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if edit.old:
            if text.count(edit.old) != 1:
                raise BuildError(f"{edit.path}: the text to replace occurs {text.count(edit.old)} times, "
                                 f"not once:\n{edit.old}")
            text = text.replace(edit.old, edit.new)
        else:
            text += edit.new
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def diff_of(tree: Path, edits: list[Edit]) -> str:
    """The edits as a git diff against the checked-out commit; the tree is left clean."""
    apply_edits(tree, edits)
    git(tree, "add", "--all")
    patch = git(tree, "diff", "--cached", "--no-color", "--no-ext-diff", "--no-renames")
    git(tree, "reset", "--quiet", "--hard")
    return patch


def git_apply(tree: Path, patch: str) -> None:
    proc = subprocess.run(["git", "apply", "--verbose", "-"], cwd=tree, input=patch, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise BuildError(f"git apply failed in {tree}:\n{proc.stderr}")


def run_tests(tree: Path, command: list[str], python: str) -> dict[str, TestStatus]:
    """Run the task's test command with `python` and parse it the way the harness does."""
    argv = [python if part == "python" else part for part in command]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tree), "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", **DEMO_ENV.env_vars}
    proc = subprocess.run(argv, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300)
    return PARSE(proc.stdout)


def test_argv(test_patch: str) -> list[str]:
    """The harness's own test command line for the task (test files named by the test patch)."""
    return shlex.split(test_command(DEMO_ENV, test_patch))


def check_history(project: Project, repo: Path, shas: list[str], work: Path, pythons: list[str]) -> None:
    """Every test of every commit passes: the bugs are ones nobody had a test for yet."""
    for index, sha in enumerate(shas):
        tree = checkout(repo, sha, work / f"history-{index}")
        for python in pythons:
            statuses = run_tests(tree, ["python", "-m", "unittest", "-v"], python)
            bad = {t: s.value for t, s in statuses.items() if s is not TestStatus.PASSED}
            if not statuses or bad:
                raise BuildError(f"{project.name} commit {index} ({python}): tests do not all pass: {bad}")
        shutil.rmtree(tree)


def shift_hunks(patch: str, offset: int) -> str:
    def shifted(match: re.Match[str]) -> str:
        old, old_count, new, new_count = match.groups()
        return f"@@ -{int(old) + offset}{old_count or ''} +{int(new) + offset}{new_count or ''} @@"

    return re.sub(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", shifted, patch, flags=re.M)


def break_hunk_counts(patch: str) -> str:
    """Claim two more lines on each side of the first hunk than its body has (a common model slip)."""
    def wrong(match: re.Match[str]) -> str:
        old, old_count, new, new_count = (int(g) for g in match.groups())
        return f"@@ -{old},{old_count + 2} +{new},{new_count + 2} @@"

    return re.sub(r"^@@ -(\d+),(\d+) \+(\d+),(\d+) @@", wrong, patch, count=1, flags=re.M)


def model_patch(mixed: Mixed, tree: Path, gold: str) -> str:
    """The text of the demo-mixed prediction; diffs lose git's `index` lines, as model output does."""
    if mixed.kind == "raw":
        return mixed.raw
    if mixed.kind == "bad_counts":
        text = break_hunk_counts(gold)
    else:
        text = diff_of(tree, mixed.edits)
        if mixed.kind == "offset":
            text = shift_hunks(text, 6)
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("index "))


def verdict_of(task: dict, text: str, tree: Path, python: str) -> dict:
    """Apply a prediction with issuebench's patch engine, run the tests, grade: what the harness does."""
    applied = apply_patch(tree, text)
    base = {"patch_status": applied.status.value, "apply_method": applied.method}
    if applied.status is PatchStatus.EMPTY:
        return {"status": InstanceStatus.EMPTY.value, "outcome": None, **base}
    if applied.status is PatchStatus.INVALID:
        return {"status": InstanceStatus.INVALID_PATCH.value, "outcome": None, **base}
    if not applied.applied:
        return {"status": InstanceStatus.APPLY_FAILED.value, "outcome": None, **base}
    git_apply(tree, task["test_patch"])
    statuses = run_tests(tree, test_argv(task["test_patch"]), python)
    graded = grade(statuses, task["FAIL_TO_PASS"], task["PASS_TO_PASS"])
    status = InstanceStatus.RESOLVED if graded.resolved else InstanceStatus.UNRESOLVED
    return {"status": status.value, "outcome": graded.outcome.value, **base}


def build_task(project: Project, definition: TaskDef, repo: Path, shas: list[str], work: Path,
               pythons: list[str]) -> tuple[dict, dict, dict]:
    """(task row, demo-mixed prediction, its measured verdict)."""
    instance_id = f"{OWNER}__{project.name}-{definition.number}"
    base = shas[definition.base]
    tree = checkout(repo, base, work / instance_id)
    gold = diff_of(tree, definition.gold)
    test_patch = diff_of(tree, definition.tests)
    if any(is_test_path(p) for p in files_touched(gold)) or not all(is_test_path(p) for p in files_touched(test_patch)):
        raise BuildError(f"{instance_id}: the gold patch must touch only code, the test patch only tests")
    command = test_argv(test_patch)
    runs: dict[str, tuple[dict, dict]] = {}
    for python in pythons:
        git_apply(tree, test_patch)
        before = run_tests(tree, command, python)
        git_apply(tree, gold)
        after = run_tests(tree, command, python)
        git(tree, "reset", "--quiet", "--hard")
        git(tree, "clean", "-fdq")
        runs[python] = (before, after)
    before, after = runs[pythons[0]]
    for python, other in runs.items():
        if other != (before, after):
            raise BuildError(f"{instance_id}: {python} gives different results from {pythons[0]}")
    not_passing = {t: s.value for t, s in after.items() if s is not TestStatus.PASSED}
    if not_passing:
        raise BuildError(f"{instance_id}: tests still fail with the gold patch: {not_passing}")
    fail_to_pass = sorted(t for t in after if before.get(t) is not TestStatus.PASSED)
    pass_to_pass = sorted(t for t in after if before.get(t) is TestStatus.PASSED)
    if not fail_to_pass:
        raise BuildError(f"{instance_id}: no test fails before the gold patch")
    row = {
        "repo": f"{OWNER}/{project.name}",
        "instance_id": instance_id,
        "base_commit": base,
        "patch": gold,
        "test_patch": test_patch,
        "problem_statement": definition.problem_statement,
        "hints_text": definition.hints_text,
        "created_at": definition.created_at,
        "version": definition.version,
        "FAIL_TO_PASS": fail_to_pass,
        "PASS_TO_PASS": pass_to_pass,
        "environment_setup_commit": shas[definition.setup],
        "env": DEMO_ENV.model_dump(mode="json"),
    }
    text = model_patch(definition.mixed, tree, gold)
    prediction = {"instance_id": instance_id, "model_name_or_path": "demo-mixed", "model_patch": text}
    measured = verdict_of(row, text, tree, pythons[0])
    expected = {"status": definition.mixed.status.value, "outcome": definition.mixed.outcome,
                "patch_status": definition.mixed.patch_status.value if definition.mixed.patch_status else None}
    if definition.mixed.kind == "raw" and not text.strip():
        expected["patch_status"] = PatchStatus.EMPTY.value
    elif definition.mixed.status is InstanceStatus.INVALID_PATCH:
        expected["patch_status"] = PatchStatus.INVALID.value
    got = {k: measured[k] for k in expected}
    if got != expected:
        raise BuildError(f"{instance_id}: the demo-mixed prediction was written to give {expected}, "
                         f"but gives {got}\n{text}")
    shutil.rmtree(tree)
    return row, prediction, {**measured, "why": definition.mixed.why}


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def build(out: Path, pythons: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="issuebench-demo-build-") as tmp:
        work = Path(tmp)
        tasks, mixed, details = [], [], {}
        for project in load_projects():
            repo = work / project.name / "repo"
            shas = build_repository(project, repo)
            check_history(project, repo, shas, work / project.name, pythons)
            git(repo, "bundle", "create", "--quiet", str(out / f"{project.name}.bundle"), "--all")
            for definition in project.tasks:
                row, prediction, verdict = build_task(project, definition, repo, shas, work / project.name, pythons)
                tasks.append(row)
                mixed.append(prediction)
                details[row["instance_id"]] = verdict
                print(f"{row['instance_id']}: F2P {len(row['FAIL_TO_PASS'])}, P2P {len(row['PASS_TO_PASS'])}; "
                      f"demo-mixed -> {verdict['status']} ({verdict['outcome'] or verdict['patch_status']})")
    write_jsonl(out / "tasks.jsonl", tasks)
    write_jsonl(out / "mixed.jsonl", mixed)
    write_jsonl(out / "empty.jsonl", [{"instance_id": t["instance_id"], "model_name_or_path": "demo-empty",
                                       "model_patch": ""} for t in tasks])
    write_json(out / "expected_mixed.json", {i: d["status"] for i, d in details.items()})
    write_json(out / "expected_mixed_details.json", details)


def bundle_heads(path: Path) -> str:
    return git(path.parent, "bundle", "list-heads", str(path))


def same_data(built: Path, committed: Path) -> list[str]:
    """Files that differ between two builds (bundles compared by their refs, not their bytes)."""
    differ = []
    for path in sorted(built.iterdir()):
        other = committed / path.name
        if not other.exists():
            differ.append(path.name)
        elif path.suffix == ".bundle":
            if bundle_heads(path) != bundle_heads(other):
                differ.append(path.name)
        elif not filecmp.cmp(path, other, shallow=False):
            differ.append(path.name)
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", default=[],
                        help="an extra interpreter that must give the same test results (repeatable)")
    parser.add_argument("--check", action="store_true", help="rebuild and compare with the committed data")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="where to write the data")
    args = parser.parse_args()
    pythons = [sys.executable, *args.python]
    try:
        if args.check:
            with tempfile.TemporaryDirectory(prefix="issuebench-demo-check-") as tmp:
                build(Path(tmp), pythons)
                differ = same_data(Path(tmp), args.out)
            if differ:
                print(f"demo data is out of date: {', '.join(differ)} differ; run scripts/build_demo.py")
                return 1
            print("demo data is up to date")
            return 0
        build(args.out, pythons)
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
