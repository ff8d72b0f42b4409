"""Several passes of `swebench_pass.py` from one commit, read as one: the rows they cover together.

    .venv/bin/python benchmarks/swebench_pass_combine.py OUT1 OUT2 ... [--markdown FILE]

A pass over every row at hand can be run as several passes (a few repositories each, so that each
ends in the time at hand and its report stands alone). This reads their `swebench-pass.json` and
prints what one pass over the union would show: rows covered, gold and no-op verdicts, core-seconds
per instance, eval over the tests' own time, disk and misses. It refuses passes of different commits
or of overlapping rows (exit 2). Each pass kept its own `ISSUEBENCH_HOME` and uv cache, so the disk
figure is their sum: one home would share uv's cache and the environments of common versions.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

COLD = ("environments", "gold-cold", "noop-cold")
WARM = ("gold-warm", "noop-warm")
NOT_RUN = "not run (no result.json)"


class Refused(Exception):
    pass


def load(out: Path) -> dict:
    path = out / "swebench-pass.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise Refused(f"{path}: cannot read a pass report ({exc}); run swebench_pass.py "
                      "--report-only on that --output first") from None


def check(passes: dict[str, dict]) -> str:
    """The one commit the passes share; refuses mixed commits, unclean trees and shared rows."""
    commits = {name: p["meta"]["commit"] for name, p in passes.items()}
    if len(set(commits.values())) != 1:
        raise Refused("the passes ran from different commits: "
                      + ", ".join(f"{n} at {c[:12]}" for n, c in commits.items()))
    unclean = [name for name, p in passes.items() if not p["meta"].get("clean")]
    if unclean:
        raise Refused(f"{', '.join(unclean)}: ran from a tree with uncommitted changes")
    seen: dict[str, str] = {}
    for name, p in passes.items():
        for repo, counts in p["repositories"].items():
            if counts.get("in_pass"):
                if repo in seen:
                    raise Refused(f"{repo} is in two passes ({seen[repo]} and {name}): give each row once")
                seen[repo] = name
    return next(iter(commits.values()))


def _sum(passes: list[dict], steps: tuple[str, ...], key: str) -> float:
    return sum(p["steps"][s][key] for p in passes for s in steps)


def per_instance(passes: list[dict], steps: tuple[str, ...]) -> float | None:
    n = sum(p["datasets"]["all (unique ids)"]["in_pass"] for p in passes)
    return round(_sum(passes, steps, "core_seconds") / n, 2) if n else None


def complete(p: dict, steps: tuple[str, ...]) -> bool:
    """Every instance of the pass has a result in each of these steps."""
    n = p["datasets"]["all (unique ids)"]["in_pass"]
    return all(p["steps"][s]["instances"] == n for s in steps)


def over_tests(passes: list[dict], step: str) -> float | None:
    total = sum(p["steps"][step]["durations"]["sum_total_s"] for p in passes)
    tests = sum(p["steps"][step]["durations"]["sum_tests_s"] for p in passes)
    return round(total / tests, 3) if tests else None


def dataset_rows(passes: list[dict]) -> list[str]:
    out = ["| rows | in the data | at hand | in these passes | run | needs network | gold resolved, of the "
           "offline-runnable |", "|---|---:|---:|---:|---:|---:|---:|"]
    first = passes[0]["datasets"]
    for name in first:
        counts = [p["datasets"].get(name, {}) for p in passes]
        got = {k: sum(c.get(k, 0) for c in counts) for k in ("in_pass", "run", "gold_resolved", "offline")}
        share = f" ({100 * got['gold_resolved'] / got['offline']:.1f}%)" if got["offline"] else ""
        out.append(f"| {name} | {first[name]['rows']} | {first[name]['at_hand']} | {got['in_pass']} | "
                   f"{got['run']} | {got['run'] - got['offline']} | {got['gold_resolved']}/{got['offline']}{share} |")
    return out


def pass_rows(passes: dict[str, dict]) -> list[str]:
    out = ["| pass | repositories | rows | gold resolved (offline) | no-op resolved / run | cold core-s per "
           "instance | warm core-s per instance | disk GiB |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, p in passes.items():
        repos = ", ".join(r for r, c in p["repositories"].items() if c.get("in_pass"))
        every = p["datasets"]["all (unique ids)"]
        warm = p["per_instance_core_seconds"]["warm_pass"] if complete(p, WARM) else "not run"
        out.append(f"| {name} | {repos} | {every['in_pass']} | {every['gold_resolved']}/{every['offline']} | "
                   f"{len(p['noop_resolved'])}/{p['steps']['noop-cold']['instances']} | "
                   f"{p['per_instance_core_seconds']['cold_pass']} | {warm} | {p['disk']['total'] / 2**30:.2f} |")
    return out


def misses(passes: dict[str, dict]) -> list[str]:
    out = []
    for p in passes.values():
        for group, ids in sorted(p["misses"].items()):
            if group == NOT_RUN:
                out.append(f"- {group}: {len(ids)} ({', '.join(ids[:6])}{' ...' if len(ids) > 6 else ''})")
                continue
            out += [f"- {i}: {group}: {p['reasons'].get(i, '')[:160]}" for i in ids]
        out += [f"- {i}: no-op resolved" for i in p["noop_resolved"]]
    return out or ["- none"]


def render(passes: dict[str, dict]) -> str:
    commit = check(passes)
    every = list(passes.values())
    cold_done = all(complete(p, COLD) for p in every)
    warm_done = [n for n, p in passes.items() if complete(p, WARM)]
    warm = per_instance([passes[n] for n in warm_done], WARM) if warm_done else None
    ratio_step = "gold-warm" if len(warm_done) == len(every) else "gold-cold"
    out = [f"- {len(every)} passes, all from commit `{commit[:12]}` (clean tree)", "", *pass_rows(passes), "",
           *dataset_rows(every), "",
           f"**Per instance, all passes: cold {per_instance(every, COLD)} core-seconds**"
           + ("" if cold_done else " (some cold steps unfinished: see the misses)")
           + (f"; **warm {warm}** over the passes whose warm steps ran ({', '.join(warm_done)})" if warm_done
              else "; warm not run")
           + f". Eval over the sandboxed tests' own time ({ratio_step}): {over_tests(every, ratio_step)}.",
           "", f"Disk, summed over the passes' own homes and uv caches: "
           f"{sum(p['disk']['total'] for p in every) / 2**30:.2f} GiB.", "", "Misses:", *misses(passes)]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outputs", nargs="+", type=Path, help="the --output folders of the passes")
    parser.add_argument("--markdown", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    try:
        passes = {out.name: load(out) for out in args.outputs}
        text = render(passes)
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(text, end="")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
