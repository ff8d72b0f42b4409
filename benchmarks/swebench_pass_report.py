"""The figures of benchmarks/swebench_pass.py from what the pass left (pure: dicts in, dict and Markdown out).

Inputs: the rows of the pass, every step's result.json records, the steps' measured usage, the
environments' build records and the disk figures. The Markdown holds no path of the machine it
ran on, so that it can go into the docs as printed.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

# The steps in the order they run: a cold pass (environments, gold, no-op) in a new cache home,
# then the same warm with --no-cache.
ENVIRONMENTS, GOLD_COLD, NOOP_COLD, GOLD_WARM, NOOP_WARM = (
    "environments", "gold-cold", "noop-cold", "gold-warm", "noop-warm")
STEPS = (ENVIRONMENTS, GOLD_COLD, NOOP_COLD, GOLD_WARM, NOOP_WARM)
COLD_STEPS, WARM_STEPS = (ENVIRONMENTS, GOLD_COLD, NOOP_COLD), (GOLD_WARM, NOOP_WARM)
STEP_TITLES = {
    ENVIRONMENTS: "environments: builds, pristine checkouts, instance layers (a patch that cannot apply; no test runs)",
    GOLD_COLD: "gold, cold",
    NOOP_COLD: "no-op, cold",
    GOLD_WARM: "gold, warm (`--no-cache`)",
    NOOP_WARM: "no-op, warm (`--no-cache`)",
}
NEEDS_NETWORK = "needs network"
NOT_RUN = "not run (no result.json)"

# Reasons whose first part only says where it failed: the part after it says why.
_GENERIC_HEAD = re.compile(r"^(environment … failed to build|no workspace|no repository|harness error|"
                           r"no environment recipe|model patch [a-z_]+)$")
_HEX = re.compile(r"\b[0-9a-f]{7,64}\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _normalise(text: str) -> str:
    """A reason's part with what differs between rows of one cause (hashes, counts) masked."""
    return _NUMBER.sub("N", _HEX.sub("…", text)).strip()


def reason_head(reason: str) -> str:
    """The first part of a reason (to the first ': ' or '; '), two parts when the first is generic."""
    parts = re.split(r": |; ", reason or "", maxsplit=2)
    head = _normalise(parts[0])
    if _GENERIC_HEAD.match(head) and len(parts) > 1:
        head += ": " + _normalise(re.split(r" \(|, ", parts[1], maxsplit=1)[0])
    return head[:120] or "no reason given"


def failing_lists(result: Mapping) -> list[str]:
    status = result.get("tests_status") or {}
    return [name for name in ("FAIL_TO_PASS", "PASS_TO_PASS") if (status.get(name) or {}).get("failure")]


def cause_of(result: Mapping | None) -> str:
    """The cause a result that is not `resolved` is grouped under: its status and its reason's first part.

    Unresolved runs are told apart by which graded lists fail; runs that need the internet are
    one group whatever their tests say."""
    if result is None:
        return NOT_RUN
    status = str(result.get("status"))
    if status == "needs_network":
        return NEEDS_NETWORK
    if status == "unresolved":
        lists = failing_lists(result)
        if lists:
            return f"unresolved: {' and '.join(lists)} tests fail"
    return f"{status}: {reason_head(str(result.get('reason') or ''))}"


def group_misses(ids: Iterable[str], results: Mapping[str, Mapping]) -> dict[str, list[str]]:
    """cause -> ids of `ids` whose result is not resolved, largest group first."""
    groups: dict[str, list[str]] = defaultdict(list)
    for iid in ids:
        result = results.get(iid)
        if result is None or not result.get("resolved"):
            groups[cause_of(result)].append(iid)
    return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def step_usage(attempts: list[Mapping]) -> dict:
    """One step's usage over its attempts (a resumed step adds them up; peaks are maxima)."""
    def total(key: str) -> float:
        return sum(float(a.get(key) or 0.0) for a in attempts)

    core = sum(float(a["core_seconds"]) if "core_seconds" in a else
               float(a.get("user_seconds") or 0.0) + float(a.get("sys_seconds") or 0.0) for a in attempts)
    return {"attempts": len(attempts), "wall_seconds": round(total("wall_seconds"), 1),
            "core_seconds": round(core, 1),
            "cpu_sources": sorted({str(a.get("cpu_source", "rusage")) for a in attempts}),
            "user_seconds": round(total("user_seconds"), 1), "sys_seconds": round(total("sys_seconds"), 1),
            "max_rss_kib": max((int(a.get("max_rss_kib") or 0) for a in attempts), default=0),
            "tree_pss_peak_kib": max((int(a.get("tree_pss_peak_kib") or 0) for a in attempts), default=0),
            "interrupted_attempts": sum(bool(a.get("interrupted")) for a in attempts),
            "unmeasured_attempts": sum(bool(a.get("unmeasured")) for a in attempts)}


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def duration_figures(results: Mapping[str, Mapping]) -> dict:
    """Medians of the per-instance durations result.json records, and wall over the tests' own time
    on the instances whose tests ran (with the sandboxed build of a checkout's products, where the
    run made them: the repository's own work, as the tests are)."""
    parts: dict[str, list[float]] = defaultdict(list)
    ratios: list[float] = []
    total_all = tests_all = 0.0
    for result in results.values():
        d = result.get("durations") or {}
        for key in ("workspace", "env", "prebuild", "tests", "total"):
            if key in d:
                parts[key].append(float(d[key]))
        if d.get("tests") and d.get("total"):
            sandboxed = d["tests"] + d.get("prebuild", 0.0)
            ratios.append(d["total"] / sandboxed)
            total_all += d["total"]
            tests_all += sandboxed
    return {"instances": len(results), **{f"median_{k}_s": _median(v) for k, v in sorted(parts.items())},
            "with_tests": len(ratios), "sum_total_s": round(total_all, 1), "sum_tests_s": round(tests_all, 1),
            "total_over_tests": round(total_all / tests_all, 3) if tests_all else None,
            "median_total_over_tests": _median(ratios)}


def environment_figures(records: list[Mapping], steps_time: Mapping[str, list[tuple[float, float]]]) -> dict:
    """Built and failed environments, their recorded build times, and which step built each one.

    records: {"env_hash", "state": built|failed, "build_seconds", "built_at_epoch", "reason"}."""
    built = [r for r in records if r.get("state") == "built"]
    seconds = sorted(float(r.get("build_seconds") or 0.0) for r in built)
    by_step: Counter = Counter()
    for r in built:
        when = r.get("built_at_epoch")
        step = next((name for name, spans in steps_time.items()
                     if when is not None and any(a - 2 <= when <= b + 2 for a, b in spans)), "before the pass")
        by_step[step] += 1
    failed = [r for r in records if r.get("state") == "failed"]
    profile = {key: round(sum(float(r.get(key) or 0.0) for r in built), 1)
               for key in ("steps_seconds", "failed_steps_seconds", "sandboxed_seconds")}
    return {"built": len(built), "failed": len(failed), "build_seconds_total": round(sum(seconds), 1), **profile,
            "build_seconds_median": _median(seconds), "build_seconds_max": round(seconds[-1], 1) if seconds else None,
            "built_by_step": dict(by_step),
            "failed_reasons": dict(Counter(reason_head(str(r.get("reason") or "")) for r in failed))}


def summarise(meta: Mapping, rows: list[Mapping], results: Mapping[str, Mapping[str, Mapping]],
              usage: Mapping[str, list[Mapping]], envs: list[Mapping], disk: Mapping,
              steps_time: Mapping[str, list[tuple[float, float]]]) -> dict:
    """Every figure of the pass.

    rows: {"instance_id", "repo", "datasets": [...], "at_hand": bool, "in_pass": bool, "differs": [...]}
    results: step -> instance_id -> result.json; usage: step -> attempts (swebench_pass_measure.ChildUsage dicts).
    """
    in_pass = [r["instance_id"] for r in rows if r.get("in_pass")]
    gold, noop = results.get(GOLD_COLD, {}), results.get(NOOP_COLD, {})
    steps = {}
    for step in STEPS:
        u = step_usage(list(usage.get(step, [])))
        n = len(results.get(step, {}))
        u.update(instances=n, core_seconds_per_instance=round(u["core_seconds"] / n, 2) if n else None,
                 durations=duration_figures(results.get(step, {})))
        steps[step] = u
    n = len(in_pass)

    def per_instance(names: Iterable[str]) -> float | None:
        # Only over steps every instance finished: a stopped step's CPU over all the pass's
        # instances would read as a cheap pass (its own per-instance figure stays in the table).
        names = list(names)
        if not n or any(steps[s]["instances"] < n for s in names):
            return None
        return round(sum(steps[s]["core_seconds"] for s in names) / n, 2)

    datasets: dict[str, Counter] = defaultdict(Counter)
    repos: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        for name in [*row.get("datasets", []), "all (unique ids)"]:
            c = datasets[name]
            c["rows"] += 1
            c["at_hand"] += bool(row.get("at_hand"))
            _count(c, row, gold, noop)
        _count(repos[row["repo"]], row, gold, noop)
    for c in datasets.values():
        c["offline"] = c["run"] - c["needs_network"]
    misses = group_misses(in_pass, gold)
    network = misses.pop(NEEDS_NETWORK, [])
    warm = results.get(GOLD_WARM, {})
    changed = sorted(i for i in in_pass if i in gold and i in warm
                     and bool(gold[i].get("resolved")) != bool(warm[i].get("resolved")))
    return {
        "meta": dict(meta), "steps": steps,
        "per_instance_core_seconds": {"cold_pass": per_instance(COLD_STEPS), "warm_pass": per_instance(WARM_STEPS),
                                      **{s: steps[s]["core_seconds_per_instance"] for s in STEPS}},
        "wall_seconds": {"cold_pass": round(sum(steps[s]["wall_seconds"] for s in COLD_STEPS), 1),
                         "warm_pass": round(sum(steps[s]["wall_seconds"] for s in WARM_STEPS), 1)},
        "datasets": {k: dict(v) for k, v in datasets.items()},
        "repositories": {k: dict(v) for k, v in sorted(repos.items())},
        "environments": environment_figures(envs, steps_time),
        "disk": dict(disk),
        "misses": misses, "needs_network": network,
        "environments_step_statuses": dict(Counter(str(r.get("status"))
                                                   for r in results.get(ENVIRONMENTS, {}).values())),
        "noop_resolved": sorted(i for i in in_pass if (noop.get(i) or {}).get("resolved")),
        "noop_statuses": dict(Counter(str(noop[i].get("status")) for i in in_pass if i in noop)),
        "verdict_changed_warm": changed,
        "rows_differ": {r["instance_id"]: r["differs"] for r in rows if r.get("in_pass") and r.get("differs")},
        "reasons": {i: str(gold[i].get("reason") or "")[:400] for ids in misses.values() for i in ids if i in gold},
    }


def _count(c: Counter, row: Mapping, gold: Mapping, noop: Mapping) -> None:
    if not row.get("in_pass"):
        return
    iid = row["instance_id"]
    c["in_pass"] += 1
    g = gold.get(iid)
    if g is None:
        return
    c["run"] += 1
    if g.get("status") == "needs_network":
        c["needs_network"] += 1
    c["gold_resolved"] += bool(g.get("resolved"))
    n = noop.get(iid)
    if n is not None and n.get("status") != "needs_network":
        c["noop_run"] += 1
        c["noop_resolved"] += bool(n.get("resolved"))


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else f"{part}/0"


def _gib(n: int | None) -> str:
    return f"{(n or 0) / 2**30:.2f} GiB"


def _mib(kib: int | None) -> str:
    return f"{(kib or 0) / 1024:.0f} MiB"


def _num(x: float | None, unit: str = "") -> str:
    return "-" if x is None else f"{x:g}{unit}"


def _core(x: float | None, unit: str = " core-seconds") -> str:
    """A pass's figure, or why there is none (a step some instances did not finish)."""
    return "not finished" if x is None else f"{x:g}{unit}"


def render(report: Mapping) -> str:
    """The Markdown report (no path of this machine in it)."""
    meta, steps = report["meta"], report["steps"]
    out = ["### The pass", ""]
    tree = ("clean tree" if meta.get("clean") else f"**{meta['changed_files']} tracked files changed**"
            if meta.get("changed_files") else "tree state unknown")
    out += [f"- Commit `{meta.get('commit', '?')[:12]}` ({tree}), issuebench {meta.get('version', '?')}, "
            f"harness versions in the results: {', '.join(meta.get('harness_versions') or ['?'])}.",
            f"- Started {meta.get('started', '?')}, finished {meta.get('finished', '?')}; "
            f"{meta.get('cores', '?')} cores, `--workers {meta.get('workers', '?')}`, load average "
            f"{meta.get('load_start', '?')} at the start and {meta.get('load_end', '?')} at the end.",
            f"- Cold: a new `ISSUEBENCH_HOME`; {meta.get('uv_cache_note', '')}",
            f"- Command: `{meta.get('command', '')}`"]
    if meta.get("source_note"):
        out.append(f"- **{meta['source_note']}**")
    resumed = [s for s in STEPS if steps[s]["attempts"] > 1 or steps[s]["unmeasured_attempts"]]
    if resumed:
        out.append("- Resumed steps (their figures add the attempts; an attempt killed without being "
                   "waited for is not measured): " + ", ".join(
                       f"{s} ({steps[s]['attempts']} attempts, {steps[s]['unmeasured_attempts']} unmeasured)"
                       for s in resumed))
    out += ["", "| rows | in the data | repository and base commit at hand | in this pass | run | needs network "
            "| gold resolved, of the offline-runnable | no-op resolved |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, c in sorted(report["datasets"].items(), key=lambda kv: kv[0].startswith("all")):
        out.append(f"| {name} | {c.get('rows', 0)} | {c.get('at_hand', 0)} | {c.get('in_pass', 0)} | {c.get('run', 0)} "
                   f"| {c.get('needs_network', 0)} | {_pct(c.get('gold_resolved', 0), c.get('offline', 0))} "
                   f"| {c.get('noop_resolved', 0)}/{c.get('noop_run', 0)} |")
    out += ["", "| repository | in this pass | run | gold resolved | no-op resolved |", "|---|---:|---:|---:|---:|"]
    for repo, c in report["repositories"].items():
        if c.get("in_pass"):
            out.append(f"| {repo} | {c['in_pass']} | {c.get('run', 0)} | {c.get('gold_resolved', 0)} "
                       f"| {c.get('noop_resolved', 0)}/{c.get('noop_run', 0)} |")
    sources = {src for s in STEPS for src in steps[s]["cpu_sources"]}
    how = ("the CPU time of a cgroup of its own that each step's `issuebench eval` ran in, with every "
           "process it started, the sandboxed tests included" if sources == {"cgroup"} else
           "**from rusage only (no cgroup could be made): the sandboxed tests' CPU is missing**")
    out += ["", f"Time and CPU per step (core-seconds: {how}):", "",
            "| step | instances | wall | core-seconds | per instance | median instance wall | largest process "
            "| whole tree's peak (PSS, sampled each second) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s in STEPS:
        u = steps[s]
        out.append(f"| {STEP_TITLES[s]} | {u['instances']} | {u['wall_seconds']:.0f} s | {u['core_seconds']:.0f} "
                   f"| {_num(u['core_seconds_per_instance'])} | {_num(u['durations'].get('median_total_s'), ' s')} "
                   f"| {_mib(u['max_rss_kib'])} | {_mib(u['tree_pss_peak_kib'])} |")
    pi, wall = report["per_instance_core_seconds"], report["wall_seconds"]
    out += ["", f"**Per instance: cold pass {_core(pi['cold_pass'])}** (environments "
            f"{_num(pi[ENVIRONMENTS])} + gold {_num(pi[GOLD_COLD])} + no-op {_num(pi[NOOP_COLD])}), "
            f"**warm pass {_core(pi['warm_pass'], '')}** (gold {_num(pi[GOLD_WARM])} + no-op {_num(pi[NOOP_WARM])}); "
            f"wall {wall['cold_pass']:.0f} s cold and {wall['warm_pass']:.0f} s warm."]
    env = report["environments"]
    by_step = ", ".join(f"{n} in {s}" for s, n in sorted(env["built_by_step"].items()))
    out += ["", f"Environments: {env['built']} built ({by_step or 'none'}), {env['failed']} failed; their "
            f"build records add up to {env['build_seconds_total']:.0f} s of build wall time (median "
            f"{_num(env['build_seconds_median'], ' s')}, longest {_num(env['build_seconds_max'], ' s')})."]
    if env.get("steps_seconds"):
        out.append(f"- their logs' timed steps: {env['steps_seconds']:.0f} s, of which {env['failed_steps_seconds']:.0f} s "
                   f"in steps that failed (attempts made again otherwise) and {env['sandboxed_seconds']:.0f} s in "
                   "sandboxed steps (the project's own install and what it compiles)")
    for why, count in sorted(env["failed_reasons"].items()):
        out.append(f"- failed build ({count}): {why}")
    others = {s: n for s, n in report["environments_step_statuses"].items() if s != "apply_failed"}
    if others:
        out.append("- the environments step's instances that did not reach the patch (all others did): "
                   + ", ".join(f"{s} {n}" for s, n in sorted(others.items())))
    d = steps[GOLD_WARM]["durations"]
    out += ["", f"Eval over the sandboxed tests' own time, warm gold, {d['with_tests']} instances whose tests ran: "
            f"{_num(d['total_over_tests'])} (sum of each instance's `total` over its `tests` in result.json: "
            f"{d['sum_total_s']:.0f} s / {d['sum_tests_s']:.0f} s; median per instance "
            f"{_num(d['median_total_over_tests'])}; `total` is workspace, environment lookup, patches, "
            "tests and parsing, not the artifacts written after)."]
    disk = report["disk"]
    out += ["", "Disk at the end (bytes on disk; a hard-linked file counts in each folder that holds it, once "
            "in the total):", "", "| what | disk |", "|---|---:|"]
    for name, size in disk.get("folders", {}).items():
        out.append(f"| {name} | {_gib(size)} |")
    out.append(f"| **everything above** | **{_gib(disk.get('total'))}** |")
    out += ["", "Misses of gold (cold), by cause:", ""]
    if not report["misses"]:
        out.append("- none")
    for cause, ids in report["misses"].items():
        out.append(f"- {cause} ({len(ids)}): {', '.join(ids)}")
    if report["needs_network"]:
        out.append(f"- needs network, apart ({len(report['needs_network'])}): {', '.join(report['needs_network'])}")
    statuses = ", ".join(f"{s} {n}" for s, n in sorted(report["noop_statuses"].items()))
    out += ["", f"No-op (cold): resolved {len(report['noop_resolved'])}"
            + (f" ({', '.join(report['noop_resolved'])})" if report["noop_resolved"] else "")
            + f"; statuses: {statuses or 'none'}."]
    if report["verdict_changed_warm"]:
        out.append(f"Gold's verdict differs between cold and warm on: {', '.join(report['verdict_changed_warm'])}.")
    if report["rows_differ"]:
        out += ["", "Ids in more than one dataset whose rows differ (the first dataset's row was run):"]
        out += [f"- {i}: {', '.join(v)}" for i, v in sorted(report["rows_differ"].items())]
    return "\n".join(out) + "\n"
