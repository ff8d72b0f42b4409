#!/usr/bin/env python
"""Re-run a published system's submitted patches on the real repositories and compare with the
official verdicts (the reference harness's logs of a SWE-bench Verified run).

    python benchmarks/conformance_rerun.py LOGS_DIR --repos CLONES --out DIR
        [--lite LITE.jsonl ...] [--only owner/name,...] [--workers 1] [--timeout 1800]
        [--report-only] [--json]

LOGS_DIR holds one folder per instance with the reference's `eval.sh` (the base commit in
`git diff <sha>`, the test patch in the heredoc after `git apply -v -`), the submitted
`patch.diff` and `report.json` (the union of success and failure per list is FAIL_TO_PASS /
PASS_TO_PASS; `resolved` is the official verdict). For every instance whose repository is among
the clones a row is rebuilt (repository from the id; `version`, `created_at` and
`environment_setup_commit` from the Lite row when the id is there; otherwise no version, so the
harness reads it from the repository at the base commit and says so in the result, and the
environment commit of the Lite rows of that version when there are some). The patches are
written as a predictions file and `issuebench eval` runs them through the CLI, one repository at
a time, cheapest first, under `nice`. Then each verdict is compared with the official one, per
repository, and every disagreement is listed with our status and reason and the tests whose
outcome differs. With --report-only nothing runs: the results already in DIR are compared.

A verdict is compared only where our run completed (`resolved` or `unresolved`): a run that ended
`error`, `needs_network`, `log_unparseable`, a limit or anything else gave no verdict, and is not
counted as agreeing with an official "unresolved". The whole cross-table (official resolved /
unresolved by our status) is printed beside the agreement.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from issuebench.harness.artifacts import RunLayout, read_instance_result
from issuebench.harness.task_version import with_repository_version
from issuebench.harness.workspace import git
from issuebench.models import InstanceReport, Prediction, Task

MODEL = "sweagent-claude-3.5-sonnet-verified"
RUN_ID = "conformance-rerun"
LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")
# Cheapest per instance first: a repository whose environments the Lite run already built (sympy's
# versions share them with Lite's) before one whose Verified versions need new builds (xarray
# 2022.x, the compiled astropy).
ORDER = ("psf/requests", "pytest-dev/pytest", "sympy/sympy", "pylint-dev/pylint", "sphinx-doc/sphinx",
         "pydata/xarray", "astropy/astropy")
_HEREDOC = re.compile(r"git apply -v - <<'(EOF_\d+)'\n(.*?)\n\1\n", re.S)
_BASE = re.compile(r"^git (?:diff|checkout) ([0-9a-f]{40})\b", re.M)


def repo_of(instance_id: str) -> str:
    return "-".join(instance_id.replace("__", "/").split("-")[:-1])


def official(inst_dir: Path) -> dict:
    data = json.loads((inst_dir / "report.json").read_text(encoding="utf-8"))
    return data.get(inst_dir.name) or next(iter(data.values()))


def rebuild(inst_dir: Path, clone: Path, lite: dict[str, dict]) -> tuple[Task, Prediction, str, str | None] | str:
    """The task row, the prediction, where the version came from and the version the harness will
    read (None for Lite rows); or why not."""
    iid = inst_dir.name
    script = (inst_dir / "eval.sh").read_text(encoding="utf-8")
    base, heredoc = _BASE.search(script), _HEREDOC.search(script)
    if not base or not heredoc:
        return "eval.sh without base commit or test patch"
    status = official(inst_dir).get("tests_status") or {}
    lists = {k: sorted({*status.get(k, {}).get("success", []), *status.get(k, {}).get("failure", [])})
             for k in LISTS}
    row = lite.get(iid) or {}
    task = Task(instance_id=iid, repo=repo_of(iid), base_commit=base.group(1), test_patch=heredoc.group(2) + "\n",
                version=row.get("version"), created_at=row.get("created_at"),
                environment_setup_commit=row.get("environment_setup_commit"), **lists)
    source, group = "lite row", None
    if not task.version:
        # What the harness itself will read (rows without a version); used here only to give the
        # rows of one version one environment commit, as the dataset does (share_environments).
        versioned, note = with_repository_version(task, clone)
        source = "repository" + (f" ({note})" if note else "")
        date = git(clone, "show", "-s", "--format=%cI", task.base_commit, check=False).stdout.strip()
        task, group = task.model_copy(update={"created_at": date or None}), versioned.version
    patch = (inst_dir / "patch.diff").read_text(encoding="utf-8")
    return task, Prediction(instance_id=iid, model_name_or_path=MODEL, model_patch=patch), source, group


def share_environments(tasks: list[tuple[Task, str | None]], lite: dict[str, dict]) -> None:
    """Rows without an environment commit get their version's: the Lite rows' when Lite has that
    version, else the newest base commit among the rebuilt rows of the version (the dataset's
    rule), so one environment serves the version instead of one per row."""
    groups: dict[tuple[str, str], list[Task]] = {}
    for task, version in tasks:
        if not task.environment_setup_commit and version:
            groups.setdefault((task.repo, version), []).append(task)
    for (repo, version), group in groups.items():
        same = [r for r in lite.values() if r["repo"] == repo and r.get("version") == version]
        commit = (max(same, key=lambda r: r["created_at"])["environment_setup_commit"] if same
                  else max(group, key=lambda t: t.created_at or "").base_commit)
        for task in group:
            task.environment_setup_commit = commit


# Our statuses that are a verdict; every other one says the run could not give one.
COMPLETED = ("resolved", "unresolved")
NOT_RUN = "not run"


def completed(status: str | None) -> bool:
    return status in COMPLETED


def cross_table(pairs: list[tuple[bool, str | None]]) -> dict[str, Counter]:
    """(official resolved, our status or None when not run) -> official verdict -> our status -> count."""
    table: dict[str, Counter] = {"resolved": Counter(), "unresolved": Counter()}
    for official_resolved, ours in pairs:
        table["resolved" if official_resolved else "unresolved"][ours or NOT_RUN] += 1
    return table


def agreement(pairs: list[tuple[bool, str | None]]) -> tuple[int, int]:
    """(agreeing, completed): over the runs that completed only."""
    done = [(official, ours) for official, ours in pairs if completed(ours)]
    return sum((ours == "resolved") == official for official, ours in done), len(done)


def render_cross_table(table: dict[str, Counter]) -> list[str]:
    """The Markdown cross-table: completed statuses first, then the others, then not run."""
    seen = {status for row in table.values() for status in row}
    others = sorted(seen - {*COMPLETED, NOT_RUN})
    columns = [*COMPLETED, *others, *([NOT_RUN] if NOT_RUN in seen else [])]
    lines = ["| official verdict (rows) by our status (columns) | " + " | ".join(columns) + " | all |", "|---" + "|---:" * (len(columns) + 1) + "|"]
    for verdict, row in table.items():
        lines.append(f"| {verdict} | " + " | ".join(str(row.get(c, 0)) for c in columns)
                     + f" | {sum(row.values())} |")
    return lines


def compare(ours: InstanceReport | None, ref: dict) -> tuple[bool, str]:
    """(verdicts agree, what differs: our status and reason, and the tests that differ). A run that
    did not complete (no verdict) never agrees."""
    theirs = bool(ref.get("resolved"))
    if ours is None:
        return False, NOT_RUN
    agree = completed(ours.status.value) and bool(ours.resolved) == theirs
    ref_status = ref.get("tests_status") or {}
    mine = ours.tests_status.model_dump() if ours.tests_status is not None else {}
    diffs = []
    for name in LISTS:
        official_ok = set(ref_status.get(name, {}).get("success", []))
        our_ok = set(mine.get(name, {}).get("success", [])) if mine else set()
        listed = official_ok | set(ref_status.get(name, {}).get("failure", []))
        for t in sorted(listed):
            if (t in official_ok) != (t in our_ok):
                diffs.append(f"{name} {t}: official {'pass' if t in official_ok else 'fail'}, "
                             f"ours {'pass' if t in our_ok else 'fail'}")
    if agree and not diffs:
        return True, ""
    head = (f"ours {ours.status.value} vs official {'resolved' if theirs else 'unresolved'}"
            f" ({ours.reason[:300]})")
    more = f" (+{len(diffs) - 6} more)" if len(diffs) > 6 else ""
    return agree, head + ("; " + "; ".join(diffs[:6]) + more if diffs else "")


def run_eval(out: Path, repos: Path, workers: int, timeout: float, ids: list[str]) -> int:
    cmd = ["nice", "-n", "10", str(Path(sys.executable).parent / "issuebench"), "eval",
           "-d", str(out / "tasks.jsonl"), "-p", str(out / "predictions.jsonl"), "--repos", str(repos),
           "--workers", str(workers), "--timeout", str(timeout), "--output", str(out), "--run-id", RUN_ID,
           "--python-fallback", "nearest", "-i", *ids]
    print("$ " + " ".join(cmd[:-len(ids)]) + f" <{len(ids)} ids>", flush=True)
    return subprocess.run(cmd, env=os.environ).returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", type=Path)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lite", type=Path, action="append", default=[])
    ap.add_argument("--only", default="", help="comma-separated owner/name repositories")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--json", action="store_true", help="also write OUT/agreement.json")
    args = ap.parse_args(argv)
    lite = {r["instance_id"]: r for path in args.lite
            for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r}
    only = {r for r in args.only.split(",") if r}
    dirs = sorted(p for p in args.logs.iterdir() if (p / "report.json").is_file())
    per_repo: dict[str, Counter] = {}
    rows: dict[str, tuple[Task, Prediction, str]] = {}
    groups: list[tuple[Task, str | None]] = []
    for inst in dirs:
        repo = repo_of(inst.name)
        c = per_repo.setdefault(repo, Counter())
        c["instances"] += 1
        clone = args.repos / repo.replace("/", "__")
        if not clone.exists() or (only and repo not in only):
            continue
        got = rebuild(inst, clone, lite)
        if isinstance(got, str):
            c["not rebuilt"] += 1
            continue
        c["re-runnable"] += 1
        rows[inst.name] = got[:3]
        groups.append((got[0], got[3]))
    share_environments(groups, lite)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:  # a report on a running run leaves the run's inputs alone
        (args.out / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t, _, _ in rows.values()))
        (args.out / "predictions.jsonl").write_text("".join(p.model_dump_json() + "\n"
                                                            for _, p, _ in rows.values()))
    repos_here = sorted({t.repo for t, _, _ in rows.values()},
                        key=lambda r: ORDER.index(r) if r in ORDER else len(ORDER))
    if not args.report_only:
        for repo in repos_here:
            run_eval(args.out, args.repos, args.workers, args.timeout,
                     [iid for iid, (t, _, _) in rows.items() if t.repo == repo])
    layout = RunLayout(args.out, RUN_ID)
    table, disagreements, no_verdict = [], [], []
    pairs: list[tuple[bool, str | None]] = []
    for iid, (task, _, source) in rows.items():
        ref = official(args.logs / iid)
        ours = read_instance_result(layout.instance_dir(MODEL, iid))
        agree, why = compare(ours, ref)
        pairs.append((bool(ref.get("resolved")), ours.status.value if ours is not None else None))
        c = per_repo[task.repo]
        if ours is None:
            c["not run"] += 1
            continue
        c["run"] += 1
        c["completed"] += int(completed(ours.status.value))
        c["agree"] += int(agree)
        c["official resolved"] += int(bool(ref.get("resolved")))
        c["ours resolved"] += int(bool(ours.resolved))
        table.append({"instance_id": iid, "agree": agree, "official": bool(ref.get("resolved")),
                      "ours": bool(ours.resolved), "status": ours.status.value, "version": source,
                      "completed": completed(ours.status.value), "why": why})
        if not completed(ours.status.value):
            no_verdict.append(f"{iid}: {why} [version: {source}]")
        elif not agree:
            disagreements.append(f"{iid}: {why} [version: {source}]")
        elif why:
            table[-1]["tests_differ"] = True
    print(f"\n{'repository':28} {'inst':>4} {'rerun':>5} {'run':>4} {'compl':>5} {'agree':>5} {'off.res':>7} "
          f"{'our.res':>7}")
    total = Counter()
    for repo, c in sorted(per_repo.items()):
        total.update(c)
        print(f"{repo:28} {c['instances']:4} {c['re-runnable']:5} {c['run']:4} {c['completed']:5} {c['agree']:5} "
              f"{c['official resolved']:7} {c['ours resolved']:7}")
    print(f"{'all':28} {total['instances']:4} {total['re-runnable']:5} {total['run']:4} {total['completed']:5} "
          f"{total['agree']:5} {total['official resolved']:7} {total['ours resolved']:7}")
    cross = cross_table(pairs)
    print("\nOfficial verdict by our status, every re-runnable instance:\n")
    print("\n".join(render_cross_table(cross)))
    agree_n, done_n = agreement(pairs)
    if pairs:
        share = f" ({100 * agree_n / done_n:.1f}%)" if done_n else ""
        print(f"\nofficial verdict reproduced on {agree_n} of the {done_n} runs that completed "
              f"(ours resolved or unresolved){share}; {total['run'] - done_n} runs gave no verdict "
              f"(other statuses), {len(pairs) - total['run']} not run; {total['re-runnable']} re-runnable, "
              f"{total['instances'] - total['re-runnable']} without a clone at hand")
    for line in disagreements:
        print("DISAGREE " + line)
    for line in no_verdict:
        print("NO VERDICT " + line)
    for row in table:
        if row.get("tests_differ"):
            print(f"same verdict, tests differ: {row['instance_id']}: {row['why']}")
    if args.json:
        (args.out / "agreement.json").write_text(json.dumps(
            {"per_repo": per_repo, "cross_table": cross, "agree": agree_n, "completed": done_n,
             "instances": table}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
