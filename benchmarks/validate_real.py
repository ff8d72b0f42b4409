"""`issuebench validate` on real SWE-bench Lite rows, from scratch, against the official lists.

    .venv/bin/python benchmarks/validate_real.py --dataset LITE_TEST.jsonl --dataset LITE_DEV.jsonl \
        --repos CLONES --output OUT [--repeats 3] [--instance-ids ID ...] [--compare-only] [--markdown FILE]

For each repository in turn (one at a time, `--workers 1`, under `nice -n 10`: this is meant to
share a small machine), the chosen rows are written with FAIL_TO_PASS and PASS_TO_PASS emptied and
run through the command line as a user would (`issuebench validate ROWS --repos CLONES --repeats N`).
The lists validate finds are then compared with the official ones: FAIL_TO_PASS must be equal;
every PASS_TO_PASS difference is named with its cause, read from validate's own per-run outcomes
(`<output>.runs.jsonl`): flaky across repeats, skipped or xfail, fails before and after, not in
our runs at all (a test the reference's parser saw that ours does not), ...
`--compare-only` recomputes the table from an earlier run's files (`--also DIR`: and another's).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

# A spread of cheap rows: each repository once or twice, rows gold resolves on fetched clones first.
DEFAULT_IDS = [
    "sympy__sympy-20590", "sympy__sympy-24102",
    "marshmallow-code__marshmallow-1343", "marshmallow-code__marshmallow-1359",
    "pallets__flask-4992",
    "pylint-dev__pylint-7228",
    "mwaskom__seaborn-3010",
    "pylint-dev__astroid-1866",
    "pytest-dev__pytest-5221", "pytest-dev__pytest-7373",
    "pydata__xarray-4248",
]


def as_list(value: object) -> list[str]:
    return json.loads(value) if isinstance(value, str) else list(value or [])


def load_rows(datasets: list[Path], ids: list[str]) -> dict[str, dict]:
    rows = {}
    for path in datasets:
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                if row["instance_id"] in ids:
                    rows[row["instance_id"]] = row
    return rows


def run_validate(repo: str, rows: list[dict], args: argparse.Namespace) -> float:
    stem = repo.replace("/", "__")
    candidates = args.output / f"{stem}.candidates.jsonl"
    with candidates.open("w") as fh:
        for row in rows:  # from scratch: validate must find both lists itself
            fh.write(json.dumps({**row, "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]"}) + "\n")
    argv = ["nice", "-n", "10", str(Path(sys.executable).parent / "issuebench"), "validate", str(candidates),
            "--repos", str(args.repos), "--repeats", str(args.repeats), "--workers", "1",
            "--timeout", str(args.timeout), "-o", str(args.output / f"{stem}.tasks.jsonl")]
    started = time.monotonic()
    with (args.output / f"{stem}.log").open("w") as log:
        subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=False)
    return time.monotonic() - started


def cause(test: str, seen: dict | None, official_side: str) -> str:
    """One short cause for a test in one list and not the other."""
    if seen is None:
        return "task not validated"
    why = seen["dropped"].get(test)
    if why:
        return why.split(" (")[0]
    if not any(test in run for run in (*seen["before"], *seen["after"])):
        return "not in our runs (the reference's parser saw it, ours does not)"
    return f"in our other list (official {official_side})"


def compare(rows: dict[str, dict], args: argparse.Namespace) -> list[dict]:
    found: dict[str, dict] = {}
    seen: dict[str, dict] = {}
    for path in [p for folder in (args.output, *args.also) for p in sorted(folder.glob("*.tasks.jsonl"))]:
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                found[row["instance_id"]] = row
        runs = path.with_name(path.name.replace(".tasks.jsonl", ".tasks.runs.jsonl"))
        if runs.exists():
            for line in runs.read_text().splitlines():
                record = json.loads(line)
                seen[record["instance_id"]] = record
    results = []
    for iid, row in sorted(rows.items()):
        off_f2p, off_p2p = set(as_list(row["FAIL_TO_PASS"])), set(as_list(row["PASS_TO_PASS"]))
        ours = found.get(iid)
        record = seen.get(iid)
        our_f2p = set(as_list(ours["FAIL_TO_PASS"])) if ours else set()
        our_p2p = set(as_list(ours["PASS_TO_PASS"])) if ours else set()
        diffs: list[tuple[str, str]] = []  # (test, cause)
        for test in sorted(off_f2p - our_f2p):
            diffs.append((test, "F2P missing: " + cause(test, record, "F2P")))
        for test in sorted(our_f2p - off_f2p):
            diffs.append((test, "F2P extra: " + ("official P2P" if test in off_p2p else "not in official lists")))
        for test in sorted(off_p2p - our_p2p):
            diffs.append((test, "P2P missing: " + cause(test, record, "P2P")))
        for test in sorted(our_p2p - off_p2p):
            diffs.append((test, "P2P extra: " + ("official F2P" if test in off_f2p else "not in official lists")))
        results.append({"instance_id": iid, "kept": bool(ours),
                        "runs": f"{len(record['before'])}+{len(record['after'])}" if record else "-", "reason": record["reason"] if record else "not run",
                        "f2p_equal": bool(ours) and our_f2p == off_f2p, "p2p_equal": bool(ours) and our_p2p == off_p2p,
                        "official": (len(off_f2p), len(off_p2p)), "ours": (len(our_f2p), len(our_p2p)),
                        "diffs": diffs})
    return results


def gold_log_check(rows: dict[str, dict], logs: Path) -> str:
    """The after side only, from an eval run's gold logs (LOGS/<id>/test_output.txt): how many ids
    validate's file rule sets aside, and which tests pass there but sit in neither official list."""
    from issuebench.collect.validation import outside_test_files
    from issuebench.datasets import load_tasks
    from issuebench.envs import resolve_spec
    from issuebench.harness.commands import files_in_diff
    from issuebench.harness.instance import parser_name
    from issuebench.parsers import extract_test_output, get_parser

    lines = ["| row (gold log) | ids | outside the test patch's files | passing, in neither official list "
             "| official, not passing |", "|---|---:|---:|---|---:|"]
    checked = 0
    for iid, row in sorted(rows.items()):
        log = logs / iid / "test_output.txt"
        if not log.exists():
            continue
        task = load_tasks_row(row, load_tasks)
        text = log.read_text()
        status = get_parser(parser_name(task, resolve_spec(task)))(extract_test_output(text) or text)
        outside = outside_test_files(status, files_in_diff(task.test_patch))
        passed = {k for k, v in status.items() if v.value == "PASSED"} - outside
        official = set(as_list(row["FAIL_TO_PASS"])) | set(as_list(row["PASS_TO_PASS"]))
        more = sorted(passed - official)
        extra = ", ".join(f"`{t}`" for t in more[:2]) + (f" and {len(more) - 2} more" if len(more) > 2 else "") or "-"
        checked += 1
        if outside or extra != "-" or official - passed:  # rows where the after side agrees are counted only
            lines.append(f"| {iid} | {len(status)} | {len(outside)} | {extra} | {len(official - passed)} |")
    return f"{checked} gold logs; the rows that are not exactly the official lists' passing side:\n\n" + \
        "\n".join(lines) + "\n"


def load_tasks_row(row: dict, load_tasks) -> object:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as fh:
        fh.write(json.dumps(row) + "\n")
        fh.flush()
        return load_tasks(fh.name)[0]


def markdown(results: list[dict], command: str) -> str:
    lines = [f"`{command}`", "", "| row | kept | runs before+after | F2P official/ours | F2P equal | P2P official/ours | P2P equal |"
             " differences by cause |", "|---|---|---|---:|---|---:|---|---|"]
    for r in results:
        causes = Counter(c for _, c in r["diffs"])
        text = "; ".join(f"{n} {c}" for c, n in causes.most_common()) or "-"
        lines.append(f"| {r['instance_id']} | {'yes' if r['kept'] else r['reason']} | {r['runs']} "
                     f"| {r['official'][0]}/{r['ours'][0]} "
                     f"| {'yes' if r['f2p_equal'] else 'no'} | {r['official'][1]}/{r['ours'][1]} "
                     f"| {'yes' if r['p2p_equal'] else 'no'} | {text} |")
    total = len(results)
    lines += ["", f"F2P equal: {sum(r['f2p_equal'] for r in results)}/{total}; "
              f"P2P equal: {sum(r['p2p_equal'] for r in results)}/{total}", ""]
    by_cause: dict[str, list[str]] = defaultdict(list)
    for r in results:
        for test, why in r["diffs"]:
            by_cause[why].append(f"{r['instance_id']}: {test}")
    for why, tests in sorted(by_cause.items()):
        lines.append(f"- **{why}** ({len(tests)}): " + ", ".join(f"`{t}`" for t in tests[:6])
                     + (" ..." if len(tests) > 6 else ""))
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, action="append", required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--instance-ids", nargs="+", default=DEFAULT_IDS)
    parser.add_argument("--compare-only", action="store_true")
    parser.add_argument("--also", type=Path, action="append", default=[],
                        help="Another run's --output folder to read (rows validated in separate runs).")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--gold-logs", type=Path, help="An eval run's gold logs folder: also check the "
                        "after side of every row there (all rows of the datasets).")
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    rows = load_rows(args.dataset, args.instance_ids)
    if not args.compare_only:
        by_repo: dict[str, list[dict]] = defaultdict(list)
        for iid in args.instance_ids:  # in the order given, one repository at a time
            if iid in rows:
                by_repo[rows[iid]["repo"]].append(rows[iid])
        for repo, repo_rows in by_repo.items():
            seconds = run_validate(repo, repo_rows, args)
            print(f"{repo}: {len(repo_rows)} row(s) validated in {seconds:.0f}s", flush=True)
    command = f"benchmarks/validate_real.py --instance-ids {' '.join(sorted(rows))}"
    text = markdown(compare(rows, args), command)
    if args.gold_logs:
        everything = load_rows(args.dataset, [p.name for p in args.gold_logs.iterdir()])
        text += "\n" + gold_log_check(everything, args.gold_logs)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
