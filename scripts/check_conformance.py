#!/usr/bin/env python
"""Regrade the reference harness's saved logs and compare with its own report.json.

    python scripts/check_conformance.py LOGS_DIR [--json] [--rule auto|current|swebench-4|swebench-2]

LOGS_DIR holds one folder per instance with `test_output.txt` and the reference's `report.json`
(found recursively). Each instance's FAIL_TO_PASS and PASS_TO_PASS lists are rebuilt from its
report.json (the union of `success` and `failure`), the log is regraded with issuebench's
parsers and grading, and the verdict and the per-test success/failure lists are compared.
Prints the agreement (N/M) and every disagreement with its reason; exits 1 when any disagree.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from issuebench.models import Task
from issuebench.regrade import FoundLog, find_logs, read_log, regrade_log, repo_from_instance_id

LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")


@dataclass
class Comparison:
    instance_id: str
    agree: bool
    reference_resolved: bool
    our_resolved: bool
    parser: str = ""
    rule: str = ""
    differences: list[str] = field(default_factory=list)


def _reference_report(log: FoundLog) -> dict | None:
    path = log.instance_dir / "report.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get(log.instance_id) or next(iter(data.values()))


def _task_from_report(instance_id: str, ref: dict) -> Task:
    status = ref.get("tests_status") or {}
    lists = {name: sorted({*status.get(name, {}).get("success", []), *status.get(name, {}).get("failure", [])})
             for name in LISTS}
    return Task(instance_id=instance_id, repo=repo_from_instance_id(instance_id), base_commit="", **lists)


def compare(log: FoundLog, ref: dict, rule: str | None) -> Comparison:
    task = _task_from_report(log.instance_id, ref)
    ours = regrade_log(log, task, rule=rule)  # type: ignore[arg-type]
    read, used_rule = read_log(log.test_output.read_text(encoding="utf-8", errors="replace"), task,
                               rule=rule)  # type: ignore[arg-type]
    result = Comparison(log.instance_id, True, bool(ref.get("resolved")), ours.resolved,
                        parser=read.parser, rule=used_rule)
    if result.reference_resolved != result.our_resolved:
        result.differences.append(f"resolved: reference {result.reference_resolved}, ours {result.our_resolved}"
                                  + (f" ({ours.status.value}: {ours.reason})" if not ours.status.completed else ""))
    applied = bool(ref.get("patch_successfully_applied"))
    if applied != ours.patch_successfully_applied:
        result.differences.append(f"patch_successfully_applied: reference {applied}, ours "
                                  f"{ours.patch_successfully_applied} ({ours.status.value}: {ours.reason})")
    ref_status = ref.get("tests_status") or {}
    our_status = ours.tests_status.model_dump() if ours.tests_status is not None else {}
    for name in LISTS:
        for outcome in ("success", "failure"):
            theirs = set(ref_status.get(name, {}).get(outcome, []))
            mine = set(our_status.get(name, {}).get(outcome, []))
            for test_id in sorted(theirs - mine):
                status = read.status_map.get(test_id) if read.status_map else None
                result.differences.append(
                    f"{name} {test_id!r}: reference says {outcome}, ours does not "
                    f"(our log status: {status.value if status else 'missing'})")
            for test_id in sorted(mine - theirs):
                result.differences.append(f"{name} {test_id!r}: ours says {outcome}, the reference does not")
    result.agree = not result.differences
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs_dir", type=Path)
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--rule", default="auto",
                        help="grading rule: auto (each log's own harness), current, swebench-4, swebench-2")
    args = parser.parse_args(argv)
    rule = None if args.rule == "auto" else args.rule
    comparisons = []
    for log in find_logs(args.logs_dir):
        ref = _reference_report(log)
        if ref is not None:
            comparisons.append(compare(log, ref, rule))
    agreeing = sum(c.agree for c in comparisons)
    if args.json:
        print(json.dumps({"agree": agreeing, "total": len(comparisons), "rule": args.rule,
                          "instances": [asdict(c) for c in comparisons]}, indent=2))
    else:
        for c in comparisons:
            if not c.agree:
                print(f"DISAGREE {c.instance_id} (parser {c.parser}, rule {c.rule})")
                for line in c.differences:
                    print(f"    {line}")
        resolved_agree = sum(c.reference_resolved == c.our_resolved for c in comparisons)
        print(f"agreement: {agreeing}/{len(comparisons)} instances identical "
              f"(resolved verdict: {resolved_agree}/{len(comparisons)}; rule {args.rule})")
    return 0 if agreeing == len(comparisons) else 1


if __name__ == "__main__":
    sys.exit(main())
