"""Benchmark `issuebench setup` on real repositories at real commits, with no model.

The corpus is what SetupAgent's benchmark asks for: a repository at a given commit, set it up so
its tests run. It has two parts:

- SWE-bench Lite base commits of the repositories held as fetched clones (`--repos DIR` holds
  bare clones named owner__name): one commit per (repository, version) pair, the pair's first
  task by instance id, with that task's creation date as the cutoff;
- with `--registry a,b,c`, SetupAgent-style projects from the registry at dated releases (the
  newest sdist at least `--years` old, fetched as benchmarks/setup_corpus.py does).

Each setup runs as its own `issuebench setup` process under `nice`, with `--test-timeout` per test
run and `--run-timeout` for the whole setup. Pairs are taken round-robin over repositories so a
partial run still covers every repository. Results are appended to `--out` (JSON lines) as they
come, and a rerun skips pairs already there. The summary (accepted share, tests passed, median
time, each failure's cause) is printed beside the published figures of model-driven systems.

    python benchmarks/setup_real.py --lite LITE.jsonl [--lite DEV.jsonl] --repos DIR --out results.jsonl
    python benchmarks/setup_real.py --out results.jsonl --report      # the summary only
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

# Published figures (share of instances or repositories set up so their tests run).
PUBLISHED = [
    ("SetupAgent (GPT-4o-mini)", "58.5-71.5% of instances"),
    ("Repo2Run (GPT-4o), 420 Python repositories", "86%"),
    ("SWE-rebench's automated setup", "~31% of repositories"),
]
REGISTRY_DEFAULT = ["tinydb", "schema", "parse", "boltons", "humanize", "docopt", "inflection", "voluptuous"]


def lite_pairs(paths: list[Path], repos: Path) -> list[dict]:
    """One job per (repository, version) held as a clone: the first task's base commit and date."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                groups[(row["repo"], str(row["version"]))].append(row)
    jobs = []
    for (repo, version), rows in groups.items():
        clone = repos / repo.replace("/", "__")
        if not clone.exists():
            continue
        first = min(rows, key=lambda r: r["instance_id"])
        jobs.append({"key": f"{repo}@{version}", "kind": "lite", "repo": repo, "version": version,
                     "instance": first["instance_id"], "src": str(clone), "commit": first["base_commit"],
                     "date": first["created_at"]})
    return round_robin(jobs)


def round_robin(jobs: list[dict]) -> list[dict]:
    """Interleave repositories (oldest version first within each) so early stops stay broad."""
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for job in sorted(jobs, key=lambda j: (j["repo"], _version_key(j["version"]))):
        by_repo[job["repo"]].append(job)
    out = []
    while any(by_repo.values()):
        for repo in sorted(by_repo):
            if by_repo[repo]:
                out.append(by_repo[repo].pop(0))
    return out


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def registry_jobs(names: list[str]) -> list[dict]:
    """Registry projects, fetched when their turn comes (fetch_registry)."""
    return [{"key": f"registry:{name}", "kind": "registry", "repo": name, "version": None} for name in names]


def fetch_registry(job: dict, years: float, work: Path) -> dict:
    """The project's newest release at least `years` old, unpacked under work."""
    import datetime as dt

    from issuebench.collect.pypi_history import download_sdist, extract_sdist, sdist_date
    from issuebench.index.fetch import fetch_sdist

    sys.path.insert(0, str(Path(__file__).parent))
    from setup_corpus import index_json_base, pick_release

    cutoff = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=365.25 * years)
    try:
        version, date = pick_release(job["repo"], cutoff, index_json_base())
        dest = work / job["repo"]
        dest.mkdir(parents=True, exist_ok=True)
        # The index's file first: pip builds metadata even to download, slow for hatch-vcs projects.
        sdist = fetch_sdist(job["repo"], version, dest) or download_sdist(job["repo"], version, dest)
        if sdist is None:
            raise RuntimeError(f"{job['repo']} {version} has no sdist")
        folder = extract_sdist(sdist, work / f"{job['repo']}-src")
        date = date or sdist_date(sdist).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {**job, "version": version, "src": str(folder), "commit": None, "date": date}
    except Exception as exc:  # a fetch failure is a row, not the end of the run
        return {**job, "version": "?", "error": f"fetch failed: {exc}"[:300]}


def run_job(job: dict, args: argparse.Namespace, logs: Path) -> dict:
    """Run one setup as its own process group; the row records what it printed and why it failed."""
    row = {k: job.get(k) for k in ("key", "kind", "repo", "version", "instance", "commit", "date")}
    if job.get("error"):
        return {**row, "success": False, "seconds": None, "cause": job["error"]}
    argv = ["nice", "-n", str(args.nice), sys.executable, "-m", "issuebench", "setup", job["src"],
            "--date", job["date"], "--format", "json", "--no-memory", "--repo", job["repo"],
            "--max-iterations", str(args.max_iterations), "--test-timeout", str(args.test_timeout)]
    if job.get("commit"):
        argv += ["--commit", job["commit"]]
    log_path = logs / (job["key"].replace("/", "__").replace(":", "_") + ".log")
    started = time.monotonic()
    with log_path.open("w") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=args.run_timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)          # the setup's own process group only
            proc.communicate()
            return {**row, "success": False, "seconds": round(time.monotonic() - started, 1),
                    "cause": f"timeout: setup took over {args.run_timeout:.0f}s"}
    seconds = round(time.monotonic() - started, 1)
    # The machine is shared: the load when the setup ended says how far its time is the setup's.
    row["load"] = round(os.getloadavg()[1], 1)
    try:
        summary = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return {**row, "success": False, "seconds": seconds, "cause": f"setup crashed: {tail[0][:200]}"}
    recipe = summary.get("recipe") or {}
    attempts = recipe.get("attempts", [])
    row.update(success=summary["success"], seconds=seconds, python=summary.get("python"),
               iterations=summary.get("iterations"), tests_run=summary.get("tests_run"),
               tests_passed=summary.get("tests_passed"), tests_offline=summary.get("tests_offline", 0),
               judged_on=next((a.get("judged_on") for a in reversed(attempts) if a.get("judged_on")), ""),
               fixes=[a["fix"] for a in attempts if a.get("fix")])
    if not summary["success"]:
        row["cause"] = failure_cause(summary, attempts)
    return row


def failure_cause(summary: dict, attempts: list[dict]) -> str:
    """The last attempt's error kind and its most telling log line."""
    last = attempts[-1] if attempts else {}
    lines = [ln.strip() for ln in str(last.get("error", "")).splitlines() if ln.strip()]
    telling = next((ln for ln in reversed(lines) if any(w in ln for w in ("Error", "error", "No solution",
                                                                          "unsatisfiable", "failed"))),
                   lines[-1] if lines else "")
    return f"{summary.get('reason') or 'not accepted'}; {last.get('error_kind') or '-'}: {telling[:200]}"


def report(rows: list[dict]) -> str:
    done = [r for r in rows if r.get("seconds") is not None or r.get("cause")]
    ok = [r for r in done if r.get("success")]
    times = [r["seconds"] for r in done if r.get("seconds") is not None]
    lines = ["| pair | commit | date | result | iterations | seconds | Python | tests passed | judged on | load |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in done:
        cause = " ".join(str(r.get("cause", "")).split())[:160]
        result = "accepted" if r.get("success") else f"not accepted: {cause}"
        tests = f"{r.get('tests_passed')}/{r.get('tests_run')}" if r.get("tests_run") is not None else "-"
        if r.get("tests_offline"):
            tests += f" ({r['tests_offline']} need the internet)"
        lines.append(f"| {r['key']} | {(r.get('commit') or '')[:10]} | {str(r.get('date', ''))[:10]} | "
                     f"{result.replace('|', '/')} | {r.get('iterations', '-')} | {r.get('seconds')} | "
                     f"{r.get('python') or '-'} | {tests} | "
                     f"{r.get('judged_on') or ('whole suite' if r.get('tests_run') else '-')} | {r.get('load', '-')} |")
    share = len(ok) / len(done) if done else 0.0
    median = statistics.median(times) if times else 0.0
    loads = [r["load"] for r in done if r.get("load") is not None]
    offline = [r for r in ok if r.get("tests_offline")]
    lines += ["", f"**{len(ok)}/{len(done)} accepted ({share:.0%}), median {median:.0f} s per setup, no model.**"
              + (f" Median load average (5 min) while they ran: {statistics.median(loads):.1f}." if loads else "")
              + (f" {len(offline)} of the accepted have tests that fail only for want of the internet"
                 " (not counted against the environment)." if offline else ""),
              "", "Published, model-driven:"]
    lines += [f"- {name}: {figure}" for name, figure in PUBLISHED]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lite", type=Path, action="append", default=[], help="SWE-bench Lite rows (JSON lines)")
    parser.add_argument("--repos", type=Path, help="folder of fetched clones named owner__name")
    parser.add_argument("--registry", default="", help="registry projects, comma separated ('default': "
                        + ",".join(REGISTRY_DEFAULT) + ")")
    parser.add_argument("--years", type=float, default=3.0, help="registry releases at least this old")
    parser.add_argument("--only", default="", help="comma-separated repositories to keep (owner/name)")
    parser.add_argument("--out", type=Path, required=True, help="results, JSON lines (appended, resumable)")
    parser.add_argument("--max-iterations", type=int, default=4)
    parser.add_argument("--test-timeout", type=float, default=600.0, help="seconds per test run of an attempt")
    parser.add_argument("--run-timeout", type=float, default=1500.0, help="seconds per setup in all")
    parser.add_argument("--budget", type=float, default=0.0, help="start no setup after this many seconds")
    parser.add_argument("--nice", type=int, default=10)
    parser.add_argument("--shard", default="", help="i/n: run only every n-th job from the i-th (0-based), "
                        "so n processes can share one --out")
    parser.add_argument("--report", action="store_true", help="print the summary of --out and stop")
    parser.add_argument("--retry-failed", action="store_true", help="run only the pairs whose last row failed, again")
    args = parser.parse_args()

    rows = [json.loads(ln) for ln in args.out.read_text().splitlines() if ln.strip()] if args.out.exists() else []
    rows = list({r["key"]: r for r in rows}.values())          # a rerun's row replaces the earlier one
    if args.report:
        print(report(rows))
        return 0
    done = {r["key"] for r in rows if r.get("success") or not args.retry_failed}
    failed = {r["key"] for r in rows if not r.get("success")}
    work = Path(tempfile.mkdtemp(prefix="setup-real-"))
    logs = args.out.with_suffix(".logs")
    logs.mkdir(parents=True, exist_ok=True)
    jobs = lite_pairs(args.lite, args.repos) if args.lite and args.repos else []
    if args.only:
        keep = {r.strip() for r in args.only.split(",")}
        jobs = [j for j in jobs if j["repo"] in keep]
    names = REGISTRY_DEFAULT if args.registry == "default" else [n for n in args.registry.split(",") if n]
    jobs += registry_jobs(names)
    if args.retry_failed:
        jobs = [j for j in jobs if j["key"] in failed]
    if args.shard:
        index, count = (int(x) for x in args.shard.split("/"))
        jobs = jobs[index::count]
    started = time.monotonic()
    for job in jobs:
        if job["key"] in done:
            continue
        if args.budget and time.monotonic() - started > args.budget:
            print(f"budget of {args.budget:.0f}s spent: stopping before {job['key']}", flush=True)
            break
        if job["kind"] == "registry":
            job = fetch_registry(job, args.years, work)
        row = run_job(job, args, logs)
        rows = [r for r in rows if r["key"] != row["key"]] + [row]
        with args.out.open("a") as handle:   # one short append per row: shards can share the file
            handle.write(json.dumps(row) + "\n")
        print(f"{row['key']:40} {'OK ' if row.get('success') else 'FAIL'} {row.get('seconds')}s "
              f"py={row.get('python')} tests={row.get('tests_passed')}/{row.get('tests_run')} "
              f"{'offline=' + str(row['tests_offline']) + ' ' if row.get('tests_offline') else ''}"
              f"{row.get('cause', '')}", flush=True)
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
