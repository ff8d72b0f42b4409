"""Real SWE-bench Lite tasks without Docker, repositories rebuilt from release sdists ("approximate base").

    .venv/bin/python benchmarks/lite_from_sdists.py --dataset LITE.jsonl [--dataset DEV.jsonl] \
        --work DIR [--repo django/django ...] [--per-version 3] [--candidates 4] [--workers 1] \
        [--no-noop] [--skip-eval] [--json FILE] [--markdown FILE]

For repositories that cannot be fetched (django, scikit-learn, matplotlib, pyvista; and flask,
requests, pytest where no clone is at hand), each task's base is a release sdist of the task's
version (see sdist_bases.py: nearest release first, up to --candidates tried), committed and tagged
in DIR/repos/owner__name. A task is "reproducible" when its gold and test patches apply there with
`issuebench eval`'s own patch engine (the method is recorded). The reproducible tasks are then run
through the `issuebench eval` command line, with gold and with a no-op patch, `--repos DIR/repos`,
and a per-repository table is printed with every miss by cause, one line each.
Resumable: base lookups are kept in DIR/bases.json and eval runs resume by run id.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from lite_real import NOOP_PATCH, read_results, render, run_eval, select_tasks, summarise
from sdist_bases import find_base, sdist_files

from issuebench.models import Task

# Repository -> the project's name on the package index.
PROJECTS = {"pallets/flask": "flask", "psf/requests": "requests", "pytest-dev/pytest": "pytest",
            "django/django": "django", "scikit-learn/scikit-learn": "scikit-learn",
            "matplotlib/matplotlib": "matplotlib", "pyvista/pyvista": "pyvista"}


def sample(tasks: list[Task], per_version: int | None) -> list[Task]:
    """At most `per_version` tasks of each (repository, version), spread over the version's tasks."""
    if not per_version:
        return tasks
    groups: dict[tuple[str, str], list[Task]] = defaultdict(list)
    for t in tasks:
        groups[(t.repo, t.version or "")].append(t)
    keep = set()
    for group in groups.values():
        step = max(1, len(group) // per_version)
        keep |= {t.instance_id for t in group[::step][:per_version]}
    return [t for t in tasks if t.instance_id in keep]


def locate_bases(tasks: list[Task], work: Path, limit: int) -> dict[str, dict]:
    """Each task's base lookup, kept in work/bases.json so a rerun only looks up new tasks."""
    store = work / "bases.json"
    bases = json.loads(store.read_text()) if store.exists() else {}
    files: dict[str, list] = {}
    for task in tasks:
        if task.instance_id in bases:
            continue
        project = PROJECTS[task.repo]
        if project not in files:
            files[project] = sdist_files(project)
        started = time.monotonic()
        found = find_base(task, project, files[project], work, limit)
        found["seconds"] = round(time.monotonic() - started, 1)
        bases[task.instance_id] = found
        store.write_text(json.dumps(bases, indent=1) + "\n")
        what = (f"{found['release']} ({found['release_vs_task']} the task) {found['methods']}"
                if found["reproducible"] else f"not reproducible; tried {found['tried']}")
        print(f"{task.instance_id:36} {what}", flush=True)
    return bases


def _test_name(test: str) -> str:
    """The function part of a test id: pytest's `path::Class::name[param]`, django's `name (mod.Class)`."""
    return test.split(" (")[0].split("::")[-1].split("[")[0].strip()


def blame_the_base(tasks: list[Task], bases: dict[str, dict], gold: dict[str, dict], repos: Path) -> None:
    """Mark gold misses whose failing tests do not exist in the release tree (nor in the test patch).

    Such a test was added on the development branch after the release: the miss says the base is
    approximate, not that the harness is wrong."""
    for t in tasks:
        result = gold.get(t.instance_id)
        if not result or result.get("status") != "unresolved":
            continue
        ts = result.get("tests_status") or {}
        failing = ts.get("FAIL_TO_PASS", {}).get("failure", []) + ts.get("PASS_TO_PASS", {}).get("failure", [])
        repo = repos / t.repo.replace("/", "__")
        missing = [x for x in failing if _test_name(x) not in (t.test_patch or "") and subprocess.run(
            ["git", "-C", str(repo), "grep", "-q", "-F", _test_name(x), bases[t.instance_id]["base"]],
            capture_output=True).returncode != 0]
        if failing and len(missing) == len(failing):
            result["status"] = "approximate_base"
            result["reason"] = (f"{len(missing)} failing test(s) absent from the {bases[t.instance_id]['release']} "
                                f"release tree, added after it (e.g. {missing[:2]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", action="append", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True, help="downloads, rebuilt repos/, eval output")
    parser.add_argument("--repo", action="append", default=[], help="only these repositories")
    parser.add_argument("--instance-ids", nargs="+", default=[])
    parser.add_argument("--per-version", type=int, default=None, help="sample this many tasks per version")
    parser.add_argument("--candidates", type=int, default=4, help="releases tried per task")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--no-noop", action="store_true")
    parser.add_argument("--skip-eval", action="store_true", help="only look up the bases")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)

    tasks = select_tasks(args.dataset, args.repo or list(PROJECTS), args.instance_ids)
    tasks = sample(tasks, args.per_version)
    bases = locate_bases(tasks, args.work, args.candidates)
    rebuilt = [t.model_copy(update={"base_commit": bases[t.instance_id]["base"],
                                    "environment_setup_commit": bases[t.instance_id]["base"]})
               for t in tasks if bases[t.instance_id]["reproducible"]]
    out = args.work / "out"
    out.mkdir(exist_ok=True)
    ids = [t.instance_id for t in rebuilt]
    # One dataset file per selection, so a lookup-only run never rewrites the file an eval reads.
    dataset = out / f"tasks-{len(ids)}-{abs(hash(tuple(ids))) % 10**8}.jsonl"
    dataset.write_text("".join(json.dumps(t.model_dump(mode="json", exclude_none=True)) + "\n" for t in rebuilt))
    eval_args = argparse.Namespace(repos=args.work / "repos", output=out, workers=args.workers,
                                   timeout=args.timeout, python_fallback="nearest")
    wall: dict[str, float] = {}
    if ids and not args.skip_eval:
        wall["gold"] = run_eval(dataset, "gold", ids, eval_args, "sdist-gold")
        if not args.no_noop:
            preds = out / "noop.jsonl"
            preds.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": "noop",
                                                 "model_patch": NOOP_PATCH}) + "\n" for i in ids))
            wall["noop"] = run_eval(dataset, str(preds), ids, eval_args, "sdist-noop")
    gold = read_results(out, "sdist-gold", "gold")
    noop = read_results(out, "sdist-noop", "noop")
    blame_the_base(tasks, bases, gold, args.work / "repos")
    report = summarise(tasks, set(ids), gold, noop)
    report["wall_seconds"] = {k: round(v, 1) for k, v in wall.items()}
    report["bases"] = {t.instance_id: bases[t.instance_id] for t in tasks}
    text = render(report).replace("| at_hand |", "| reproducible (sdist) |").replace(
        "of the tasks at hand", "of the tasks reproducible from a release sdist")
    methods = defaultdict(int)
    lines = ["\nTasks not reproducible from a release sdist (no tried release takes both patches):"]
    for t in tasks:
        b = bases[t.instance_id]
        if b["reproducible"]:
            methods[f"{b['release_vs_task']} the task; {b['methods']}"] += 1
        else:
            lines.append(f"- {t.instance_id} ({t.version}): " + "; ".join(b["tried"])[:300])
    text += "\n\nBases and apply methods of the reproducible tasks:\n" + "\n".join(
        f"- {n} x release {k}" for k, n in sorted(methods.items(), key=lambda kv: -kv[1]))
    if len(lines) > 1:
        text += "\n" + "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
