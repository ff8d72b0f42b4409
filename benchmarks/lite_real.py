"""SWE-bench Lite rows on real clones at each task's base commit, gold and no-op (superseded).

The real benchmark is benchmarks/swebench_pass.py now: Lite and Verified, cold in a new cache home
then warm, from one commit, with CPU, disk and memory measured. This script stays because
lite_from_sdists.py runs its instances through `run_eval`, `read_results` and `summarise` here.

    .venv/bin/python benchmarks/lite_real.py --dataset LITE_TEST.jsonl --dataset LITE_DEV.jsonl \
        --repos CLONES --output OUT [--workers 2] [--repo pallets/flask ...] [--instance-ids ...] \
        [--no-noop] [--json FILE] [--markdown FILE]

For every row whose repository is at hand (CLONES/owner__name, a clone or bare mirror holding the
base commit, pull-request refs included), it runs `issuebench eval` twice through the command line,
as a user would: with the gold patches, and with a no-op patch (a new empty-ish file at the root of
the repository, which applies everywhere and fixes nothing). It then prints a table per repository:
tasks, repository at hand, environment built, gold resolved, no-op resolved, median seconds per
instance with the environment build apart; and groups every task gold does not resolve by cause,
one line each. Rows whose repository is not at hand are counted, not run.
Both runs are resumable: rerunning with the same --output reuses finished instances.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from issuebench.datasets import load_tasks
from issuebench.models import Task
from issuebench.repos.find import find_repo

NOOP_PATCH = ("diff --git a/ISSUEBENCH_NOOP.txt b/ISSUEBENCH_NOOP.txt\nnew file mode 100644\n"
              "--- /dev/null\n+++ b/ISSUEBENCH_NOOP.txt\n@@ -0,0 +1 @@\n+this patch changes nothing\n")


def at_hand(task: Task, repos: Path, cache: dict[str, Path | None]) -> bool:
    """Whether a clone of the task's repository holding its base commit is in `repos`."""
    if task.repo not in cache:
        try:
            cache[task.repo] = find_repo(task.repo, repos, allow_clone=False)
        except Exception:  # any failure means "not at hand"
            cache[task.repo] = None
    path = cache[task.repo]
    if path is None:
        return False
    return subprocess.run(["git", "-C", str(path), "cat-file", "-e", f"{task.base_commit}^{{commit}}"],
                          capture_output=True).returncode == 0


def run_eval(dataset: Path, predictions: str, ids: list[str], args: argparse.Namespace, run_id: str) -> float:
    argv = [str(Path(sys.executable).parent / "issuebench"), "eval", "--dataset", str(dataset),
            "--predictions", predictions, "--repos", str(args.repos), "--output", str(args.output),
            "--run-id", run_id, "--workers", str(args.workers), "--timeout", str(args.timeout)]
    if args.python_fallback:
        argv += ["--python-fallback", args.python_fallback]
    argv += ["--instance-ids", *ids]
    started = time.monotonic()
    log = args.output / f"{run_id}.log"
    with open(log, "w") as handle:
        subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, check=False)
    return time.monotonic() - started


def read_results(output: Path, run_id: str, model: str) -> dict[str, dict]:
    base = output / "logs" / "run_evaluation" / run_id / model
    out = {}
    for path in sorted(base.glob("*/result.json")):
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        out[data["instance_id"]] = data
    return out


def cause_of(result: dict | None) -> str:
    """One line saying why gold did not resolve a task."""
    if result is None:
        return "not run (no result written)"
    status = result.get("status")
    if status == "unresolved":
        ts = result.get("tests_status") or {}
        f2p = ts.get("FAIL_TO_PASS", {}).get("failure", [])
        p2p = ts.get("PASS_TO_PASS", {}).get("failure", [])
        return f"unresolved: {len(f2p)} FAIL_TO_PASS and {len(p2p)} PASS_TO_PASS fail " \
               f"(e.g. {(f2p + p2p)[:2]})"
    return f"{status}: {(result.get('reason') or '')[:300]}"


def select_tasks(datasets: list[Path], repos: list[str], instance_ids: list[str]) -> list[Task]:
    """The rows of every dataset, only of `repos` and `instance_ids` when those are given."""
    tasks: list[Task] = []
    for path in datasets:
        tasks += load_tasks(str(path))
    if repos:
        tasks = [t for t in tasks if t.repo in repos]
    if instance_ids:
        tasks = [t for t in tasks if t.instance_id in instance_ids]
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", action="append", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--repo", action="append", default=[], help="only these repositories")
    parser.add_argument("--instance-ids", nargs="+", default=[])
    parser.add_argument("--no-noop", action="store_true", help="skip the no-op run")
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: summarise the results already in --output")
    parser.add_argument("--python-fallback", default="nearest")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)

    tasks = select_tasks(args.dataset, args.repo, args.instance_ids)
    clones: dict[str, Path | None] = {}
    runnable = [t for t in tasks if at_hand(t, args.repos, clones)]
    dataset = args.output / "tasks.jsonl"
    with open(dataset, "w") as handle:
        for t in runnable:
            handle.write(json.dumps(t.model_dump(mode="json", exclude_none=True)) + "\n")
    ids = [t.instance_id for t in runnable]
    wall: dict[str, float] = {}
    if ids and not args.report_only:
        wall["gold"] = run_eval(dataset, "gold", ids, args, "lite-gold")
        if not args.no_noop:
            preds = args.output / "noop.jsonl"
            preds.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": "noop",
                                                 "model_patch": NOOP_PATCH}) + "\n" for i in ids))
            wall["noop"] = run_eval(dataset, str(preds), ids, args, "lite-noop")
    gold = read_results(args.output, "lite-gold", "gold")
    noop = read_results(args.output, "lite-noop", "noop") if not args.no_noop else {}
    report = summarise(tasks, {t.instance_id for t in runnable}, gold, noop)
    report["wall_seconds"] = {k: round(v, 1) for k, v in wall.items()}
    text = render(report)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


def summarise(tasks: list[Task], runnable: set[str], gold: dict, noop: dict) -> dict:
    rows: dict[str, Counter] = defaultdict(Counter)
    times: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"env": [], "rest": []})
    misses: dict[str, list[str]] = defaultdict(list)
    for t in tasks:
        row = rows[t.repo]
        row["tasks"] += 1
        if t.instance_id not in runnable:
            continue
        row["at_hand"] += 1
        g = gold.get(t.instance_id)
        if g is None:
            continue   # at hand, not run (yet): counted apart from the misses
        row["run"] += 1
        if g and g.get("env_hash") and g.get("status") != "env_failed":
            row["env_built"] += 1   # an instance that never reached its environment does not count
        if g and g.get("resolved"):
            row["gold_resolved"] += 1
        else:
            misses[cause_of(g).split(":")[0]].append(f"{t.instance_id}: {cause_of(g)}")
        n = noop.get(t.instance_id)
        if n is not None and n.get("status") not in ("env_failed", "needs_network"):
            row["noop_run"] += 1
            row["noop_resolved"] += bool(n.get("resolved"))
        if g and g.get("durations"):
            d = g["durations"]
            times[t.repo]["env"].append(d.get("env", 0.0))
            times[t.repo]["rest"].append(d.get("total", 0.0) - d.get("env", 0.0))
    per_repo = {}
    for repo, row in sorted(rows.items()):
        tm = times[repo]
        per_repo[repo] = {**row, "median_env_s": round(statistics.median(tm["env"]), 1) if tm["env"] else None,
                          "median_rest_s": round(statistics.median(tm["rest"]), 1) if tm["rest"] else None}
    total = Counter()
    for row in rows.values():
        total.update(row)
    return {"per_repo": per_repo, "total": dict(total), "misses": dict(misses), "environments": env_builds(gold)}


def env_builds(gold: dict) -> dict:
    """The environments the gold run used and their recorded build times (each env's manifest):
    what a pass with every environment cold adds to a warm one, before dividing by the workers."""
    from issuebench import config
    from issuebench.envs import cache

    seconds: dict[str, float] = {}
    for result in gold.values():
        env_hash = (result or {}).get("env_hash")
        if env_hash and env_hash not in seconds:
            manifest = cache.read_manifest(config.envs_dir(), env_hash) or {}
            seconds[env_hash] = float(manifest.get("build_seconds") or 0.0)
    built = sorted(seconds.values())
    return {"count": len(built), "build_seconds_total": round(sum(built), 1),
            "build_seconds_median": round(statistics.median(built), 1) if built else None}


def render(report: dict) -> str:
    cols = ["tasks", "at_hand", "run", "env_built", "gold_resolved", "noop_run", "noop_resolved",
            "median_env_s", "median_rest_s"]
    lines = ["| repository | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for repo, row in report["per_repo"].items():
        lines.append(f"| {repo} | " + " | ".join(str(row.get(c, 0) if row.get(c) is not None else "-")
                                                 for c in cols) + " |")
    tot = report["total"]
    lines.append("| **all** | " + " | ".join(str(tot.get(c, "")) for c in cols[:7]) + " | | |")
    at = tot.get("run", 0)
    if at:
        lines.append(f"\ngold resolved {tot.get('gold_resolved', 0)}/{at} of the tasks run "
                     f"({100 * tot.get('gold_resolved', 0) / at:.1f}%; {tot.get('at_hand', 0)} at hand); no-op resolved "
                     f"{tot.get('noop_resolved', 0)}/{tot.get('noop_run', 0)}")
    envs = report.get("environments") or {}
    if envs.get("count"):
        lines.append(f"\n{envs['count']} environments; their recorded builds took {envs['build_seconds_total']:.0f} s "
                     f"in total (median {envs['build_seconds_median']:.0f} s): a pass with every one cold adds about "
                     "that, divided by the workers, to a warm pass")
    if report["misses"]:
        lines.append("\nTasks gold does not resolve, by cause:")
        for cause, items in sorted(report["misses"].items(), key=lambda kv: -len(kv[1])):
            lines.append(f"\n{cause} ({len(items)}):")
            lines += [f"- {item}" for item in items]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
