"""The whole dataset factory on repositories no one prepared, run as a user runs it.

For each clone `CORPUS/owner__name` of the part asked for, through the command line:

    issuebench collect CLONE --max N -o cand.jsonl                       (setup per version group)
    issuebench validate cand.jsonl --repos CORPUS --setup-fallback --repeats R --timeout T -o tasks.jsonl
    issuebench eval -d tasks.jsonl -p gold   --repos CORPUS --setup-fallback --timeout T --run-id gold
    issuebench eval -d tasks.jsonl -p noop.jsonl --repos CORPUS --setup-fallback --timeout T --run-id noop
    issuebench audit tasks.jsonl -f json

Each stage is its own process with a time limit (its process group is killed past it), its output in
`OUT/owner__name/<stage>.log`; the load average is read at each stage's start and end. One JSON line
per repository is appended to `OUT/results.jsonl` as it finishes (a rerun skips repositories already
there; `--retry-failed` runs again those without a good task): candidates and where their statements
came from, setup per version group (accepted, tests run / passed / skipped, test modules that could
not import, files cut for time), tasks kept and each rejection's cause, gold and no-op verdicts,
the tasks gold resolves and no-op does not ("good"), Verified-style audit findings, wall time per
stage and every failure's cause. The no-op prediction adds one empty file outside the code, so the
tests run on the unfixed code (an empty patch is never run).

The corpus is split once, before any result was seen: the repositories whose sdists setup was
measured on (docs/setup.md's corpus) and tqdm (the issue's own trial) are development; of the
others, those whose name's SHA-256 starts with 0-3 are development too, the rest held out.

    python benchmarks/factory_corpus.py --corpus DIR --out OUT --part heldout [--jobs 2]
    python benchmarks/factory_corpus.py --corpus DIR --out OUT --report [--part heldout]

A corpus gathered after the tuning: `--held-out-corpus` (no split). A repository some earlier corpus
ran (benchmarks/data/factory_corpora.toml: the same owner__name, or the same name under another owner)
is then not held out: its part is "seen", and `--part heldout` leaves it out. `--list NAME` prints the
corpus's entry for that file, to add when its run is reported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from threading import Lock, Thread

from issuebench.tomlcompat import tomllib

# Repositories something here was measured or tuned on: development only.
TUNED_ON = {"pallets__click", "pallets__markupsafe", "pallets__itsdangerous", "more-itertools__more-itertools",
            "pytoolz__toolz", "tqdm__tqdm"}
NOOP_PATCH = ("diff --git a/ISSUEBENCH_NOOP.txt b/ISSUEBENCH_NOOP.txt\nnew file mode 100644\n"
              "index 0000000..e69de29\n--- /dev/null\n+++ b/ISSUEBENCH_NOOP.txt\n@@ -0,0 +1 @@\n+no-op\n")
_write_lock = Lock()


HELD_OUT_CORPUS = False  # --held-out-corpus: no split, every repository not run before is held out
CORPORA_FILE = Path(__file__).resolve().parent / "data" / "factory_corpora.toml"


def earlier_corpora(path: Path | None = None) -> dict[str, str]:
    """Each repository an earlier corpus ran, by its lowercased owner__name and by its lowercased name
    alone (a fork or a move keeps the name), to the first corpus that ran it."""
    seen: dict[str, str] = {}
    for entry in tomllib.loads((path or CORPORA_FILE).read_text()).get("corpus", []):
        for repo in entry["repos"]:
            for key in (repo.lower(), repo.lower().split("__", 1)[-1]):
                seen.setdefault(key, entry["name"])
    return seen


def run_before(name: str, seen: dict[str, str]) -> str | None:
    """The earlier corpus that ran `name` (owner__name), or None."""
    return seen.get(name.lower()) or seen.get(name.lower().split("__", 1)[-1])


def part_of(name: str) -> str:
    if HELD_OUT_CORPUS:
        return "seen" if run_before(name, earlier_corpora()) else "heldout"
    if name in TUNED_ON or hashlib.sha256(name.encode()).hexdigest()[0] in "0123":
        return "dev"
    return "heldout"


def corpus(root: Path, part: str, only: list[str]) -> list[Path]:
    clones = sorted(p for p in root.iterdir() if ("__" in p.name and (p / "HEAD").exists()) or (p / ".git").exists())
    return [p for p in clones if (part == "all" or part_of(p.name) == part) and (not only or p.name in only)]


def stage(name: str, argv: list[str], work: Path, limit: float) -> dict:
    """Run one stage as its own process group; kill it past `limit` seconds."""
    log = work / f"{name}.log"
    load_start = os.getloadavg()[0]
    started = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=work, start_new_session=True)
        try:
            code = proc.wait(timeout=limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
            timed_out = True
    return {"stage": name, "exit": code, "timed_out": timed_out, "seconds": round(time.monotonic() - started, 1),
            "load": [round(load_start, 1), round(os.getloadavg()[0], 1)], "limit": limit}


def _jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _summary(folder: Path, run_id: str) -> dict:
    found = sorted(folder.glob(f"*.{run_id}.json"))
    return json.loads(found[0].read_text()) if found else {}


def run_repo(clone: Path, args: argparse.Namespace) -> dict:
    work = args.out / clone.name
    work.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-m", "issuebench"]
    row: dict = {"repo": clone.name, "part": part_of(clone.name), "started": time.time(), "stages": [],
                 "failures": []}

    def go(name: str, argv: list[str], limit: float) -> bool:
        done = stage(name, argv, work, limit)
        row["stages"].append(done)
        print(f"[{clone.name}] {name}: exit {done['exit']}{' (TIMED OUT)' if done['timed_out'] else ''} "
              f"in {done['seconds']}s, load {done['load']}", flush=True)
        if done["timed_out"]:
            row["failures"].append(f"{name}: over its limit of {limit:g}s")
        elif done["exit"] != 0:
            tail = (work / f"{name}.log").read_text(errors="replace").strip().splitlines()[-1:] or [""]
            row["failures"].append(f"{name}: exit {done['exit']}: {tail[0][:200]}")
        return done["exit"] == 0 and not done["timed_out"]

    repos = str(args.corpus.resolve())
    go("collect", [*cli, "collect", str(clone), "--max", str(args.max), "-o", "cand.jsonl"], args.collect_limit)
    candidates = _jsonl(work / "cand.jsonl")
    row["candidates"] = len(candidates)
    row["statement_sources"] = dict(Counter(c.get("problem_source", "?") for c in candidates))
    row["setups"] = [{k: s.get(k) for k in ("version", "tasks", "accepted", "python", "iterations", "seconds",
                                            "tests_run", "tests_passed", "tests_skipped", "modules_unimportable",
                                            "files_cut", "judged_on", "reason", "reused_from")}
                     for s in _jsonl(work / "cand.setup.jsonl")]
    row.update(kept=0, rejected={}, gold_resolved=0, noop_resolved=0, good=0, audit={})
    if candidates:
        go("validate", [*cli, "validate", "cand.jsonl", "--repos", repos, "--setup-fallback", "--repeats",
                        str(args.repeats), "--workers", str(args.workers), "--timeout", str(args.test_timeout),
                        "-o", "tasks.jsonl"], args.validate_limit)
    kept = _jsonl(work / "tasks.jsonl")
    row["kept"] = len(kept)
    row["rejected"] = dict(Counter(r.get("reason", "?") for r in _jsonl(work / "tasks.rejected.jsonl")))
    if kept:
        (work / "noop.jsonl").write_text("".join(json.dumps({"instance_id": t["instance_id"], "model_name_or_path":
                                                             "noop", "model_patch": NOOP_PATCH}) + "\n" for t in kept))
        for run_id, preds in (("gold", "gold"), ("noop", "noop.jsonl")):
            go(f"eval-{run_id}", [*cli, "eval", "-d", "tasks.jsonl", "-p", preds, "--repos", repos, "--setup-fallback",
                                  "--run-id", run_id, "-w", str(args.workers), "--timeout", str(args.test_timeout),
                                  "-o", "eval"], args.eval_limit)
        gold = set(_summary(work / "eval", "gold").get("resolved_ids", []))
        noop = set(_summary(work / "eval", "noop").get("resolved_ids", []))
        row.update(gold_resolved=len(gold), noop_resolved=len(noop), good=len(gold - noop))
        go("audit", [*cli, "audit", "tasks.jsonl", "-f", "json", "-o", "audit.json"], 600)
        row["audit"] = audit_row(work, kept, gold - noop)
    row["failures"] += [f"validate rejected {n}: {reason}" for reason, n in sorted(row["rejected"].items())]
    row["failures"] += [f"setup of {s['version']}: {s['reason']}" for s in row["setups"] if not s.get("accepted")]
    row["ended"] = time.time()
    row["seconds"] = round(row["ended"] - row["started"], 1)
    return row


def audit_row(work: Path, kept: list[dict], good: set[str]) -> dict:
    """Verified-style checks per good task: audit's (too narrow, too wide, underspecified >= 2) and
    the row's own quality_flags from validate."""
    try:
        rows = {r["instance_id"]: r for r in json.loads((work / "audit.json").read_text()).get("rows", [])}
    except (OSError, ValueError):
        rows = {}
    flags: Counter = Counter()
    passing = 0
    for task in kept:
        if task["instance_id"] not in good:
            continue
        found = rows.get(task["instance_id"], {})
        reasons = list(task.get("quality_flags", []))
        if found.get("too_narrow"):
            reasons.append("too narrow (tests use names the statement never mentions)")
        if found.get("too_wide"):
            reasons.append("too wide (FAIL_TO_PASS about nothing the issue or fix names)")
        if found.get("underspecified_score", 0) >= 2:
            reasons.append("underspecified: " + "; ".join(found.get("underspecified_reasons", [])))
        flags.update(reasons)
        passing += not reasons
    return {"good": len(good), "passing_checks": passing, "reasons": dict(flags)}


def corpus_entry(name: str, clones: list[Path]) -> str:
    """The [[corpus]] table that records these clones in the corpora file."""
    repos = ", ".join(json.dumps(clone.name) for clone in clones)
    return f"[[corpus]]\nname = {json.dumps(name)}\nrepos = [{repos}]\n"


def append(path: Path, row: dict) -> None:
    with _write_lock, path.open("a") as fh:
        fh.write(json.dumps(row) + "\n")


def _with_reuse(out: Path, row: dict) -> list[dict]:
    """The row's setups, each with `reused_from` as collect's own cand.setup.jsonl says (rows written
    before the script kept that key lack it)."""
    said = {s.get("version"): s.get("reused_from") for s in _jsonl(out / row["repo"] / "cand.setup.jsonl")}
    return [{**s, "reused_from": s.get("reused_from") or said.get(s.get("version"))} for s in row["setups"]]


def _setup_word(setup: dict) -> str:
    if setup.get("reused_from"):
        return f"ok (recipe of {setup['reused_from']})"
    return "ok" if setup["accepted"] else "no"


def report(out: Path, part: str) -> None:
    rows = {r["repo"]: r for r in _jsonl(out / "results.jsonl")}      # the last row of a repository counts
    rows = {k: v for k, v in rows.items() if part == "all" or v["part"] == part}
    if not rows:
        print("no results")
        return
    print("| repository | part | candidates | setup (version: result, passed/run, skipped, unimportable, cut) | "
          "kept | gold / no-op resolved | good | audit passed | s collect / validate / eval | load | failures |")
    print("|---|---|---:|---|---:|---|---:|---:|---|---|---|")
    for r in rows.values():
        r["setups"] = _with_reuse(out, r)
    for name, r in sorted(rows.items()):
        secs = {s["stage"]: s["seconds"] for s in r["stages"]}
        loads = [s["load"][0] for s in r["stages"]]
        setups = "; ".join(f"{s['version']}: {_setup_word(s)}, {s.get('tests_passed')}/"
                           f"{s.get('tests_run')}, {s.get('tests_skipped')}, {s.get('modules_unimportable')}, "
                           f"{len(s.get('files_cut') or [])}" for s in r["setups"]) or "-"
        sources = ", ".join(f"{k} {v}" for k, v in r.get("statement_sources", {}).items())
        print(f"| {name} | {r['part']} | {r['candidates']} ({sources}) | {setups} | {r['kept']} | "
              f"{r['gold_resolved']} / {r['noop_resolved']} | {r['good']} | "
              f"{r['audit'].get('passing_checks', 0)}/{r['audit'].get('good', 0)} | "
              f"{secs.get('collect', 0):.0f} / {secs.get('validate', 0):.0f} / "
              f"{secs.get('eval-gold', 0) + secs.get('eval-noop', 0):.0f} | "
              f"{min(loads, default=0):.1f}-{max(loads, default=0):.1f} | {'; '.join(r['failures'])[:300] or '-'} |")
    n = len(rows)
    with_good = sum(1 for r in rows.values() if r["good"] > 0)
    kept = sum(r["kept"] for r in rows.values())
    good = sum(r["good"] for r in rows.values())
    span = max(r["ended"] for r in rows.values()) - min(r["started"] for r in rows.values())
    busy = sum(r["seconds"] for r in rows.values())
    over = [f"{r['repo']} {s['stage']}" for r in rows.values() for s in r["stages"] if s["timed_out"]]
    audited = sum(r["audit"].get("good", 0) for r in rows.values())
    passing = sum(r["audit"].get("passing_checks", 0) for r in rows.values())
    reasons: Counter = Counter()
    for r in rows.values():
        reasons.update(r["audit"].get("reasons", {}))
    print()
    print(f"- repositories with a good task (gold resolves, no-op does not): {with_good}/{n} ({with_good / n:.0%})")
    print(f"- candidates {sum(r['candidates'] for r in rows.values())}, kept {kept}, good {good}")
    print(f"- throughput: {good / (span / 3600):.0f} good tasks per hour of wall clock ({span / 60:.0f} min for "
          f"the part); {good / (busy / 3600):.0f} per hour of one repository's run at a time")
    print(f"- stages over their limit: {', '.join(over) or 'none'}")
    # The part given when the repository ran: recording this corpus in the file later changes nothing here.
    repeated = sorted(name for name, r in rows.items() if r["part"] == "seen")
    if repeated:
        print(f"- run in an earlier corpus, so not held out: {', '.join(repeated)}")
    print(f"- good tasks passing the Verified-style checks: {passing}/{audited}"
          + (f" ({passing / audited:.0%})" if audited else "")
          + ("; reasons: " + "; ".join(f"{k} ({v})" for k, v in reasons.most_common()) if reasons else ""))
    searched = [s for r in rows.values() for s in r["setups"] if not s.get("reused_from")]
    reused = [s for r in rows.values() for s in r["setups"] if s.get("reused_from")]
    print(f"- setup per version group: {len(searched)} searched ({sum(s.get('seconds') or 0 for s in searched):.0f} s"
          f", {sum(1 for s in searched if s.get('accepted'))} accepted), {len(reused)} took an accepted group's "
          f"recipe without a search ({sum(s.get('seconds') or 0 for s in reused):.0f} s)")
    stage_totals: Counter = Counter()
    for r in rows.values():
        for s in r["stages"]:
            stage_totals[s["stage"].split("-")[0]] += s["seconds"]
    print("- wall seconds per stage, summed: " + ", ".join(f"{k} {v:.0f}" for k, v in stage_totals.most_common()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, required=True, help="folder of clones named owner__name")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--part", choices=("dev", "heldout", "seen", "all"), default="heldout")
    ap.add_argument("--held-out-corpus", action="store_true",
                    help="a corpus gathered after the tuning: every repository no earlier corpus ran is held out")
    ap.add_argument("--list", metavar="NAME", help="print CORPUS's entry for benchmarks/data/factory_corpora.toml")
    ap.add_argument("--only", nargs="*", default=[], help="owner__name folders to run (within the part)")
    ap.add_argument("--max", type=int, default=6, help="newest merged pull requests per repository")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1, help="validate/eval workers per repository")
    ap.add_argument("--jobs", type=int, default=1, help="repositories at once (2 at most on two cores)")
    ap.add_argument("--test-timeout", type=float, default=300.0,
                    help="validate's and eval's --timeout: seconds one test run may take (the unfixed code of "
                         "a before-run may loop for good)")
    ap.add_argument("--collect-limit", type=float, default=1800.0)
    ap.add_argument("--validate-limit", type=float, default=3600.0)
    ap.add_argument("--eval-limit", type=float, default=1800.0)
    ap.add_argument("--retry-failed", action="store_true", help="run again repositories without a good task")
    ap.add_argument("--report", action="store_true", help="print the table of OUT/results.jsonl only")
    args = ap.parse_args()
    global HELD_OUT_CORPUS
    HELD_OUT_CORPUS = args.held_out_corpus
    if args.list:
        print(corpus_entry(args.list, corpus(args.corpus, "all", [])))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report:
        report(args.out, args.part)
        return
    results = args.out / "results.jsonl"
    done = {r["repo"]: r for r in _jsonl(results)}
    todo = [c for c in corpus(args.corpus, args.part, args.only)
            if c.name not in done or (args.retry_failed and done[c.name]["good"] == 0)]
    print(f"{len(todo)} repositories to run: {', '.join(c.name for c in todo)}", flush=True)
    queue = list(todo)
    queue_lock = Lock()

    def worker() -> None:
        while True:
            with queue_lock:
                if not queue:
                    return
                clone = queue.pop(0)
            row = run_repo(clone, args)
            append(results, row)
            print(f"[{clone.name}] done: {row['candidates']} candidates, {row['kept']} kept, {row['good']} good, "
                  f"{row['seconds']}s", flush=True)

    threads = [Thread(target=worker) for _ in range(max(1, min(args.jobs, 2)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report(args.out, args.part)


if __name__ == "__main__":
    main()
