"""SWE-bench Multimodal (dev) and Multilingual (test) beyond Python: gold, empty and no-op on every
row whose repository is at hand, as a user runs `issuebench eval`.

    .venv/bin/python benchmarks/multilang_pass.py --rows swe-bench-multimodal-dev.jsonl \\
        --rows swe-bench-multilingual-test.jsonl --repos CLONES --output OUT --home NEW_HOME \\
        [--workers 2] [--repo owner/name ...] [--skip-per-repo K] [--per-repo N] [--report-only]

A row is at hand when CLONES/owner__name holds its base commit. Rows not at hand are counted per
repository with the reason (no clone; base commit missing; an empty FAIL_TO_PASS no run can
grade); `--skip-per-repo K --per-repo N` takes rows K+1..K+N of each repository (the first K ran in
an earlier pass). The commit each run started from goes in the report. Steps, each an
`issuebench eval` child, resumable (a run id is resumed by eval itself):
1. gold, cold: every environment is built here, in NEW_HOME;
2. empty: empty patches (no test runs; each must be `empty`);
3. no-op: a new file at the root that fixes nothing; the environments are warm, so its
   per-instance time is the warm time.
The report (OUT/multilang-pass.md, no path of this machine in it) gives per language and per
repository: rows, gold resolved, empty and no-op resolved; the cold build of each environment
(median per repository version), its disk; the warm per-instance time; and one line per miss.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOOP_PATCH = ("diff --git a/ISSUEBENCH_NOOP.txt b/ISSUEBENCH_NOOP.txt\nnew file mode 100644\n"
              "--- /dev/null\n+++ b/ISSUEBENCH_NOOP.txt\n@@ -0,0 +1 @@\n+this patch changes nothing\n")
LANGUAGE = {"redis": "C", "jq": "C", "micropython_test": "C", "googletest": "C++", "doctest": "C++",
            "karma": "JavaScript", "marked": "JavaScript", "chart_js": "JavaScript", "p5js": "JavaScript",
            "react_pdf": "JavaScript", "tap": "JavaScript", "immutable_js": "JavaScript", "calypso": "JavaScript",
            "jest": "JavaScript/TypeScript", "vitest": "TypeScript", "gotest": "Go", "cargo": "Rust",
            "maven": "Java", "ant": "Java", "gradle_custom": "Java", "phpunit": "PHP",
            "rspec_transformed_json": "Ruby", "ruby_unit": "Ruby", "jekyll": "Ruby"}
STEPS = {"gold": None, "empty": "", "noop": NOOP_PATCH}


def language(row: dict) -> str:
    return LANGUAGE.get(str(row.get("log_parser", "")).removeprefix("parse_log_"), "other")


def has_commit(clone: Path, commit: str) -> bool:
    return subprocess.run(["git", "-C", str(clone), "cat-file", "-e", f"{commit}^{{commit}}"],
                          capture_output=True).returncode == 0


def select(rows_files: list[Path], clones: Path, repos: list[str], per_repo: int | None = None,
           skip_per_repo: int = 0) -> tuple[list[dict], list[tuple[dict, str]]]:
    """(rows at hand, [(row, why not)]); with `per_repo`, the first N at hand of each repository in
    the files' order (a subset fixed before any result, not chosen by one), after the first
    `skip_per_repo` (those an earlier pass ran)."""
    at_hand, misses = [], []
    taken: dict[str, int] = defaultdict(int)
    skipped: dict[str, int] = defaultdict(int)
    for path in rows_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if repos and row["repo"] not in repos:
                continue
            clone = clones / row["repo"].replace("/", "__")
            f2p = row.get("FAIL_TO_PASS")
            if not clone.is_dir():
                misses.append((row, "repository not at hand (over the fetch limit or not fetched)"))
            elif not has_commit(clone, row["base_commit"]):
                misses.append((row, "base commit not in the fetched snapshot (nor its pull-request refs)"))
            elif f2p in ([], "[]", "", None):
                misses.append((row, "the row's FAIL_TO_PASS is empty: any patch would resolve it, eval refuses it"))
            elif skipped[row["repo"]] < skip_per_repo:
                skipped[row["repo"]] += 1
                misses.append((row, f"run in an earlier pass (--skip-per-repo {skip_per_repo})"))
            elif per_repo is not None and taken[row["repo"]] >= per_repo:
                misses.append((row, f"left out by --per-repo {per_repo}"))
            else:
                taken[row["repo"]] += 1
                at_hand.append(row)
    return at_hand, misses


def run_step(args: argparse.Namespace, step: str, rows_file: Path, ids: list[str]) -> float:
    predictions = args.output / f"{step}.jsonl"
    if STEPS[step] is None:
        pred_arg = "gold"
    else:
        predictions.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": step,
                                                   "model_patch": STEPS[step]}) + "\n" for i in ids))
        pred_arg = str(predictions)
    argv = [str(ROOT / ".venv" / "bin" / "issuebench"), "eval", "-d", str(rows_file), "-p", pred_arg,
            "--repos-dir", str(args.clones), "-o", str(args.output), "--run-id", step, "-w", str(args.workers),
            "--timeout", str(args.timeout)]
    env = {**os.environ, "ISSUEBENCH_HOME": str(args.home)}
    started = time.monotonic()
    with (args.output / f"{step}.log").open("a") as log:
        subprocess.run(argv, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    return time.monotonic() - started


def results(output: Path, step: str) -> dict[str, dict]:
    model = "gold" if step == "gold" else step
    out = {}
    for path in (output / "logs" / "run_evaluation" / step / model).glob("*/result.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        out[data["instance_id"]] = data
    return out


def env_records(home: Path) -> dict[str, dict]:
    out = {}
    for manifest in (home / "envs").glob("*/env.json"):
        data = json.loads(manifest.read_text(encoding="utf-8"))
        du = subprocess.run(["du", "-sm", str(manifest.parent)], capture_output=True, text=True).stdout.split()
        out[manifest.parent.name] = {"build_seconds": data.get("build_seconds"), "kind": data.get("kind", "python"),
                                     "disk_mb": int(du[0]) if du else None}
    return out


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "0/0"


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "-"


def report(rows: list[dict], misses: list[tuple[dict, str]], res: dict[str, dict[str, dict]],
           envs: dict[str, dict], walls: dict[str, float]) -> str:
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_repo[row["repo"]].append(row)
    lines = ["| language | repository | rows at hand | gold resolved | gold needs network | empty resolved | "
             "no-op resolved | cold env build s (median per version) | disk per env MB (median) | "
             "warm s per instance (median) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    totals = defaultdict(int)
    for repo in sorted(by_repo, key=lambda r: (language(by_repo[r][0]), r)):
        group = by_repo[repo]
        ids = [r["instance_id"] for r in group]
        gold = sum(bool(res["gold"].get(i, {}).get("resolved")) for i in ids)
        network = sum(res["gold"].get(i, {}).get("status") == "needs_network" for i in ids)
        empty = sum(bool(res["empty"].get(i, {}).get("resolved")) for i in ids)
        noop = sum(bool(res["noop"].get(i, {}).get("resolved")) for i in ids)
        per_version: dict[str, list[float]] = defaultdict(list)
        disks = []
        for i, row in zip(ids, group, strict=True):
            record = envs.get(str(res["gold"].get(i, {}).get("env_hash")))
            if record and record["build_seconds"] is not None:
                per_version[str(row.get("version"))].append(record["build_seconds"])
                disks.append(record["disk_mb"] or 0)
        cold = [statistics.median(v) for v in per_version.values()]
        warm = [sum(res["noop"][i].get("durations", {}).values()) for i in ids if i in res["noop"]]
        lines.append(f"| {language(group[0])} | {repo} | {len(group)} | {_pct(gold, len(group))} | {network} | "
                     f"{empty} | {noop} | {_median(cold)} | {_median(disks)} | {_median(warm)} |")
        for key, value in (("rows", len(group)), ("gold", gold), ("network", network), ("empty", empty),
                           ("noop", noop)):
            totals[key] += value
    lines.append(f"| all | | {totals['rows']} | {_pct(totals['gold'], totals['rows'])} | {totals['network']} | "
                 f"{totals['empty']} | {totals['noop']} | | | |")
    lines += ["", "Gold resolved of the rows that can run offline (those whose only failing tests fetch from "
              "the internet apart, `needs_network`): "
              + _pct(totals["gold"], totals["rows"] - totals["network"])]
    steps = {k: v for k, v in walls.items() if k in STEPS}
    lines += ["", "Wall time per step: " + ", ".join(f"{k} {v / 60:.1f} min" for k, v in steps.items()),
              "", "Commit: " + (", ".join(f"`{c}`" for c in walls.get("commits", [])) or "not recorded"), "",
              "Misses (one line each):", ""]
    for row in rows:
        got = res["gold"].get(row["instance_id"])
        if got is None:
            lines.append(f"- {row['instance_id']}: no gold result (the run did not reach it)")
        elif not got.get("resolved"):
            lines.append(f"- {row['instance_id']}: gold {got['status']}: {got.get('reason', '')[:200]}")
    by_reason: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row, why in misses:
        by_reason[(row["repo"], why)].append(row["instance_id"])
    for (repo, why), ids in sorted(by_reason.items()):
        lines.append(f"- {repo}: {len(ids)} row(s) not run: {why}")
    return "\n".join(lines) + "\n"


def code_commit() -> str:
    """The project's commit, marked when its tree holds uncommitted changes."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return head + (" (modified tree)" if dirty else " (clean tree)")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=Path, action="append", required=True)
    parser.add_argument("--repos", dest="clones", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--per-repo", type=int, default=None, help="the first N rows at hand per repository")
    parser.add_argument("--skip-per-repo", type=int, default=0,
                        help="leave out the first K rows at hand per repository (an earlier pass's)")
    parser.add_argument("--report-only", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    rows, misses = select(args.rows, args.clones, args.repo, args.per_repo, args.skip_per_repo)
    rows_file = args.output / "rows.jsonl"
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ids = [r["instance_id"] for r in rows]
    walls_path = args.output / "walls.json"
    walls = json.loads(walls_path.read_text()) if walls_path.is_file() else {}
    if not args.report_only:
        walls.setdefault("commits", [])
        if code_commit() not in walls["commits"]:
            walls["commits"].append(code_commit())   # a resumed pass from other code says so
        for step in STEPS:
            walls[step] = walls.get(step, 0.0) + run_step(args, step, rows_file, ids)
            walls_path.write_text(json.dumps(walls))
    text = report(rows, misses, {s: results(args.output, s) for s in STEPS}, env_records(args.home), walls)
    # A reason quotes the paths it failed at; the report names the home, not where it is.
    text = text.replace(str(args.home.resolve()), "ISSUEBENCH_HOME").replace(str(args.home), "ISSUEBENCH_HOME")
    (args.output / "multilang-pass.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
