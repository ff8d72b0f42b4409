#!/usr/bin/env python
"""Wider tests on a published system's officially resolved patches (SWE-bench Verified logs).

    python benchmarks/strength_verified.py LOGS_DIR --repos CLONES --out DIR
        [--lite LITE.jsonl] [--only pytest-dev/pytest,sympy/sympy] [--scope modules]
        [--max-modules 8] [--timeout 900] [--workers 1] [--limit N]

LOGS_DIR holds the reference harness's folders (one per instance: patch.diff, eval.sh,
report.json). For every instance the reference resolved, whose repository is among the clones,
a task row is rebuilt: the base commit and the test patch from eval.sh, FAIL_TO_PASS and
PASS_TO_PASS from report.json, the gold patch from the Lite row when there is one, else the
pull request's own diff (refs/pull/N/head against its merge-base with the base commit, code files
only), the version from the tree at the base commit (sympy's release.py, else the nearest tag),
mapped onto the nearest recipe version at or below it. The official verdict is taken as given
(resolved); only the wider-tests pass runs, so each instance costs one gold and one candidate run.

Prints, per repository, how many resolved patches break a wider test, and writes every result
to OUT/wider_results.json.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from issuebench.harness import EvalOptions, build_context
from issuebench.harness.workspace import git
from issuebench.models import InstanceReport, InstanceStatus, Prediction, Task
from issuebench.patch import split_patch
from issuebench.strength import select, wider

MODEL = "sweagent-claude-3.5-sonnet-verified"
_HEREDOC = re.compile(r"git apply -v - <<'(EOF_\d+)'\n(.*?)\n\1\n", re.S)
_BASE = re.compile(r"^git diff ([0-9a-f]{40})$", re.M)


def recipe_versions(repo: str) -> list[str]:
    from issuebench.envs.recipes import load_recipe, packaged_recipes_dir

    path = packaged_recipes_dir() / f"{repo.replace('/', '__')}.toml"
    return sorted(load_recipe(path).get("versions", {}), key=_vkey) if path.is_file() else []


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:2])


def version_at(clone: Path, repo: str, base: str) -> str | None:
    if repo == "sympy/sympy":
        text = git(clone, "show", f"{base}:sympy/release.py", check=False).stdout
        m = re.search(r"__version__ = \"(\d+)\.(\d+)", text)
    else:
        m = re.search(r"(\d+)\.(\d+)", git(clone, "describe", "--tags", "--abbrev=0", base, check=False).stdout)
    if not m:
        return None
    found = (int(m.group(1)), int(m.group(2)))
    known = [v for v in recipe_versions(repo) if _vkey(v) <= found]
    return known[-1] if known else None


def rebuild(inst_dir: Path, clones: Path, lite: dict[str, dict]) -> tuple[Task, Prediction] | str:
    iid = inst_dir.name
    report = json.loads((inst_dir / "report.json").read_text())[iid]
    if not report.get("resolved"):
        return "not resolved officially"
    repo = iid.rsplit("-", 1)[0].replace("__", "/", 1)
    clone = clones / repo.replace("/", "__")
    if not clone.exists():
        return "repository not at hand"
    script = (inst_dir / "eval.sh").read_text()
    base = _BASE.search(script)
    heredoc = _HEREDOC.search(script)
    if not base or not heredoc:
        return "eval.sh without base commit or test patch"
    lists = {k: sorted({*v.get("success", []), *v.get("failure", [])})
             for k, v in report["tests_status"].items() if k in ("FAIL_TO_PASS", "PASS_TO_PASS")}
    row = lite.get(iid)
    number = iid.rsplit("-", 1)[1]
    head = f"refs/pull/{number}/head"
    if row:
        gold = row["patch"]
    else:
        diff = git(clone, "diff", f"{base.group(1)}...{head}", check=False)
        if diff.returncode != 0:
            return f"no pull request ref {head}"
        gold = split_patch(diff.stdout)[0]
    created = git(clone, "log", "-1", "--format=%cI", head, check=False).stdout.strip() or None
    task = Task(instance_id=iid, repo=repo, base_commit=base.group(1), patch=gold,
                test_patch=heredoc.group(2) + "\n", version=(row or {}).get("version")
                or version_at(clone, repo, base.group(1)), created_at=(row or {}).get("created_at") or created,
                environment_setup_commit=(row or {}).get("environment_setup_commit"), **lists)
    pred = Prediction(instance_id=iid, model_name_or_path=MODEL, model_patch=(inst_dir / "patch.diff").read_text())
    return task, pred


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", type=Path)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lite", type=Path)
    ap.add_argument("--only", default="", help="comma-separated owner/name repositories")
    ap.add_argument("--scope", default="modules", choices=select.SCOPES)
    ap.add_argument("--max-modules", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args(argv)
    lite = {}
    if args.lite:
        lite = {r["instance_id"]: r for r in map(json.loads, args.lite.read_text().splitlines()) if r}
    only = {r for r in args.only.split(",") if r}
    tasks, preds, skipped = [], [], Counter()
    for inst in sorted(p for p in args.logs.iterdir() if (p / "report.json").is_file()):
        repo = inst.name.rsplit("-", 1)[0].replace("__", "/", 1)
        if only and repo not in only:
            continue
        got = rebuild(inst, args.repos, lite)
        if isinstance(got, str):
            skipped[got] += 1
            continue
        tasks.append(got[0])
        preds.append(got[1])
    if args.limit:
        tasks, preds = tasks[:args.limit], preds[:args.limit]
    print(f"{len(tasks)} officially resolved instance(s) rebuilt; skipped: {dict(skipped)}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    ctx = build_context(EvalOptions(output_dir=args.out, run_id="wider", timeout=args.timeout,
                                    repos_dir=args.repos, python_fallback="nearest"))
    reports = [InstanceReport(instance_id=t.instance_id, model_name_or_path=MODEL, status=InstanceStatus.RESOLVED,
                              resolved=True, repo=t.repo, cache_key="official") for t in tasks]
    start = time.monotonic()
    out_path = args.out / "wider_results.json"
    done: list[dict] = []

    def on_result(res: wider.WiderResult) -> None:
        done.append(asdict(res))
        out_path.write_text(json.dumps(done, indent=1))
        print(f"[{time.monotonic() - start:7.0f}s] {res.instance_id}: {res.status} {res.reason}"
              + (f" {res.notes}" if res.notes else ""), flush=True)

    results = wider.wider_tests_pass(reports, tasks, preds, ctx, args.scope, workers=args.workers,
                                     max_modules=args.max_modules, on_result=on_result)
    per_repo: dict[str, Counter] = {}
    for r in results:
        c = per_repo.setdefault(r.instance_id.rsplit("-", 1)[0], Counter())
        c["resolved"] += 1
        c[r.status] += 1
        c["breaking"] += int(r.breaking)
    print("\nrepository                 resolved  checked  breaking  skipped  not measured")
    for repo, c in sorted(per_repo.items()):
        unmeasured = c["resolved"] - c["checked"] - c["skipped"]
        print(f"{repo:26} {c['resolved']:8} {c['checked']:8} {c['breaking']:9} {c['skipped']:8} {unmeasured:13}")
    checked = sum(c["checked"] for c in per_repo.values())
    breaking = sum(c["breaking"] for c in per_repo.values())
    if checked:
        print(f"\nbreaking: {breaking}/{checked} checked ({100 * breaking / checked:.1f}%); PatchDiff reports 7.8%")
    print(f"elapsed {time.monotonic() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
