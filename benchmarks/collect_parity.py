"""Does `collect` find SWE-bench's own rows, with the same fields, in the repositories they came from?

For every fetched clone that has Lite rows (--repos DIR, folders owner__name), collect runs on the
whole history (no versions, no set-up) and each Lite row is looked up by id: found, base commit
equal, code files and test files of the patches equal, where the problem statement came from.
With --api, the same run answers pull-request calls from a loopback server that serves each Lite
row's pull request (base.sha, created_at, head.sha) as GitHub would. That server answers with the
row's own base commit, so "base equal" there holds by construction: it is a plumbing check (collect
asks the API for each pull request and takes its base.sha), not a measure of finding the base, and
the output says so. The offline figures are the measure.

    .venv/bin/python benchmarks/collect_parity.py --repos DIR --rows lite-test.jsonl --rows lite-dev.jsonl [--api]

Time is reported as wall clock and as CPU seconds (this process and its git children), since the
machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from issuebench.collect import CollectOptions, collect

_HEADER = re.compile(r"^diff --git a/(.*?) b/(.*)$", re.MULTILINE)


def files(patch: str) -> set[str]:
    return {m.group(2) for m in _HEADER.finditer(patch or "")}


def cpu_seconds() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def serve_pulls(rows: list[dict], repos: Path) -> tuple[ThreadingHTTPServer, str]:
    """A loopback API answering /repos/o/n/pulls/N from the rows (issues: 404)."""
    pulls: dict[tuple[str, int], dict] = {}
    for row in rows:
        number = int(row["instance_id"].rsplit("-", 1)[1])
        clone = repos / row["repo"].replace("/", "__")
        head = subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/pull/{number}/head"], cwd=clone,
                              capture_output=True, text=True, check=False).stdout.strip()
        pulls[(row["repo"], number)] = {"number": number, "title": "", "body": "",
                                        "created_at": row["created_at"], "base": {"sha": row["base_commit"]},
                                        "head": {"sha": head or None}}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = self.path.split("?")[0].strip("/").split("/")
            body, status = {"message": "Not Found"}, 404
            if len(parts) == 5 and parts[0] == "repos" and parts[3] == "pulls" and parts[4].isdigit():
                pull = pulls.get((f"{parts[1]}/{parts[2]}", int(parts[4])))
                if pull:
                    body, status = pull, 200
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


PLUMBING_NOTE = ("plumbing check, not a measure: the loopback API answers each pull request with the row's own "
                 "base commit, so 'base equal' holds by construction once collect asks the API and takes its "
                 "base.sha; the offline run measures finding the base")


def table_header(api: bool) -> list[str]:
    base = "base equal (the API's answer, the row's own)" if api else "base equal"
    lines = [f"**With the loopback API: {PLUMBING_NOTE}.**", ""] if api else []
    return [*lines, f"| repository | commits | tasks | Lite ids | found | {base} | code files equal | "
            "test files equal | statement from | wall s | CPU s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos", type=Path, required=True, help="folder of clones named owner__name")
    parser.add_argument("--rows", type=Path, action="append", required=True, help="Lite JSONL (repeat)")
    parser.add_argument("--only", action="append", default=[], help="owner/name (repeat)")
    parser.add_argument("--api", action="store_true", help="answer pull requests from a loopback API")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for path in args.rows for line in path.read_text().splitlines() if line.strip()]
    by_repo: dict[str, list[dict]] = {}
    for row in rows:
        if (args.repos / row["repo"].replace("/", "__")).exists() and (not args.only or row["repo"] in args.only):
            by_repo.setdefault(row["repo"], []).append(row)
    server = None
    if args.api:
        server, url = serve_pulls([r for rs in by_repo.values() for r in rs], args.repos)
        os.environ["GITHUB_TOKEN"] = "loopback"
        os.environ["ISSUEBENCH_GITHUB_API"] = url
    else:
        os.environ.pop("GITHUB_TOKEN", None)
    total: Counter = Counter()
    print("\n".join(table_header(args.api)))
    for repo, wanted in sorted(by_repo.items()):
        wall, cpu = time.perf_counter(), cpu_seconds()
        result = collect(args.repos / repo.replace("/", "__"),
                         CollectOptions(repo_name=repo, run_setup=False, versions=False))
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
        ours = {t.instance_id: t for t in result.tasks}
        c: Counter = Counter(n=len(wanted))
        sources: Counter = Counter()
        for row in wanted:
            task = ours.get(row["instance_id"])
            if task is None:
                print(f"<!-- missing {row['instance_id']} -->")
                continue
            c["found"] += 1
            c["base"] += task.base_commit == row["base_commit"]
            c["code"] += files(task.patch) == files(row["patch"])
            c["test"] += files(task.test_patch) == files(row["test_patch"])
            sources[(task.model_extra or {}).get("problem_source", "?")] += 1
            if task.base_commit != row["base_commit"]:
                print(f"<!-- base differs {row['instance_id']} -->")
        total.update(c)
        commits = result.table.counts.get("commits scanned", 0)
        src = ", ".join(f"{k} {v}" for k, v in sorted(sources.items()))
        print(f"| {repo} | {commits:,} | {len(result.tasks):,} | {c['n']} | {c['found']} | {c['base']} | "
              f"{c['code']} | {c['test']} | {src} | {wall:.1f} | {cpu:.1f} |", flush=True)
    n = total["n"] or 1
    print(f"| **all** | | | {total['n']} | {total['found']} ({100 * total['found'] / n:.1f}%) | "
          f"{total['base']} ({100 * total['base'] / n:.1f}%) | {total['code']} ({100 * total['code'] / n:.1f}%) | "
          f"{total['test']} ({100 * total['test'] / n:.1f}%) | | | |")
    if args.api:
        print(f"\n({PLUMBING_NOTE})")
    if server:
        server.shutdown()


if __name__ == "__main__":
    main()
