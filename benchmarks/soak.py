"""Soak: many instances, hostile and normal mixed, 2 workers; nothing may leak, verdicts must hold.

    .venv/bin/python benchmarks/soak.py [--instances 200] [--workers 2] [--timeout 8]

On the demo tasks (standard library only, so no network is needed) it runs
  1. a normal-only run: gold patches, `--instances` of them (the demo tasks repeated under
     several model names), and
  2. a mixed run of the same size: half normal, half hostile (fork bomb, endless allocation,
     detached sleeper, printing forever, huge file, network probe, writes outside the workspace),
     each hostile patch being the gold fix with the attack appended to the fixed module.
It checks every instance got the status its patch was written for, and that afterwards no process
started by a run, no per-run cgroup, no sandbox mount and no workspace is left. It prints the
throughput of each run and the ratio mixed/normal, both measured in this process.
Exit status 1 when a verdict or a leak check fails.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

from issuebench import config

ATTACKS: dict[str, tuple[str, str]] = {
    # name: (code appended to the fixed module, expected status)
    "forkbomb": ("""
        import os as _o
        while True:
            try:
                _o.fork()
            except OSError:
                pass
        """, "process_limit"),
    "alloc": ("""
        _HOG = []
        while True:
            _HOG.append(b"x" * 10_000_000)
        """, "memory_limit"),
    "sleeper": ("""
        import subprocess as _s, time as _t
        _s.Popen(["setsid", "sleep", "{marker}"])
        _t.sleep(10_000)
        """, "timeout"),
    "spam": ("""
        import os as _o
        for _ in range(100_000):
            _o.write(1, b"spam " * 100_000)
        """, "output_limit"),
    "bigfile": ("""
        with open("/tmp/testbed/big.bin", "wb") as _f:
            for _ in range(10_000):
                _f.write(b"x" * 1_000_000)
        """, "file_limit"),
    "network": ("""
        import socket as _so
        try:
            _so.socket(_so.AF_INET, _so.SOCK_DGRAM).connect(("192.0.2.1", 9))
            raise SystemExit("network reachable")
        except OSError:
            pass
        """, "resolved"),
    "write-out": ("""
        for _p in ("/usr/soak-pwned", "{outside}"):
            try:
                open(_p, "w").write("x")
            except OSError:
                pass
        """, "resolved"),
}


def hostile_patch(task, attack: str, code: str, repos: Path, scratch: Path) -> str:
    """The gold patch plus `code` appended to the first file the gold patch changes."""
    from issuebench.harness.workspace import create_workspace, git, remove_workspace
    from issuebench.patch import apply_patch, parse_patch

    src = repos / task.repo.replace("/", "__")
    ws = create_workspace(src, task.base_commit, scratch)
    try:
        apply_patch(ws, task.patch)
        target = ws / parse_patch(task.patch)[0].path
        target.write_text(target.read_text() + "\n\n" + textwrap.dedent(code).strip() + "\n")
        git(ws, "add", "-A")
        return git(ws, "diff", "--cached").stdout
    finally:
        remove_workspace(ws)


def leaks(markers: list[str], ib_home: Path) -> list[str]:
    from issuebench.sandbox.cgroups import PREFIX, parent_dir

    found: list[str] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # Our processes carry the sleeper's marker or this soak's own folder (bwrap binds it);
        # other people's sandboxes on the same machine do not count.
        if any(m in cmd for m in markers):
            found.append(f"process {proc.name}: {cmd[:80]}")
    for controller in ("pids", "memory"):
        parent = parent_dir(controller)
        if parent is not None:
            found += [f"cgroup {p}" for p in parent.iterdir() if p.name.startswith(f"{PREFIX}{os.getpid()}-")]
    mounts = Path("/proc/self/mounts").read_text()
    if "/tmp/testbed" in mounts:
        found.append("a /tmp/testbed mount is visible on the host")
    work = config.workspaces_root(ib_home)
    if work.exists():
        found += [f"workspace {p}" for p in work.glob(f"ws-{os.getpid()}-*") if p.is_dir()]   # this run's
    return found


def run(name: str, jobs, tasks, args, out: Path) -> tuple[float, Counter, list[str]]:
    from issuebench.demo import demo_repos_dir
    from issuebench.harness import EvalOptions, build_context, run_evaluation

    ctx = build_context(EvalOptions(output_dir=out, run_id=name, repos_dir=demo_repos_dir(),
                                    timeout=args.timeout, use_cache=False, memory_mb=args.memory_mb))
    ctx.limits.max_output_bytes = 5_000_000
    ctx.limits.max_file_mb = 64
    expected = {(p.model_name_or_path, p.instance_id): want for p, want in jobs}
    t0 = time.perf_counter()
    result = run_evaluation(tasks, [p for p, _ in jobs], ctx, workers=args.workers)
    elapsed = time.perf_counter() - t0
    tally: Counter = Counter()
    wrong: list[str] = []
    for report in result.reports:
        want = expected[(report.model_name_or_path, report.instance_id)]
        got = report.status.value
        tally[(report.model_name_or_path.rsplit("-", 1)[0], got)] += 1
        if got != want:
            wrong.append(f"{report.model_name_or_path}/{report.instance_id}: want {want}, got {got} "
                         f"({report.reason[:120]})")
    return elapsed, tally, wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=8.0)
    parser.add_argument("--memory-mb", type=int, default=512)
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="issuebench-soak-"))
    os.environ["ISSUEBENCH_HOME"] = str(root / "home")
    from issuebench.datasets import gold_predictions
    from issuebench.demo import demo_repos_dir, demo_tasks
    from issuebench.models import Prediction

    tasks = demo_tasks()
    gold = {p.instance_id: p.model_patch for p in gold_predictions(tasks)}
    repos = demo_repos_dir()
    marker = f"{time.time() % 10_000:.6f}"
    outside = root / "outside-pwned"

    def normal_jobs(n: int, tag: str):
        return [(Prediction(instance_id=tasks[i % len(tasks)].instance_id,
                            model_name_or_path=f"normal-{tag}{i // len(tasks)}",
                            model_patch=gold[tasks[i % len(tasks)].instance_id]), "resolved") for i in range(n)]

    scratch = root / "scratch"
    scratch.mkdir()
    patches: dict[tuple[str, str], str] = {}
    for task in tasks:
        for attack, (code, _) in ATTACKS.items():
            code = code.replace("{marker}", marker).replace("{outside}", str(outside))
            patches[(attack, task.instance_id)] = hostile_patch(task, attack, code, repos, scratch)
    hostile: list = []
    names = list(ATTACKS)
    for i in range(args.instances - args.instances // 2):
        attack = names[i % len(names)]
        task = tasks[(i // len(names)) % len(tasks)]
        round_ = i // (len(names) * len(tasks))
        hostile.append((Prediction(instance_id=task.instance_id, model_name_or_path=f"hostile-{attack}-{round_}",
                                   model_patch=patches[(attack, task.instance_id)]), ATTACKS[attack][1]))

    normal_only = normal_jobs(args.instances, "a")
    mixed = normal_jobs(args.instances // 2, "b") + hostile
    print(f"soak: {len(normal_only)} normal-only, then {len(mixed)} mixed ({len(hostile)} hostile), "
          f"{args.workers} workers, timeout {args.timeout:g}s", flush=True)

    # Warm the environments once so neither timed run pays for building them.
    run("warm", normal_jobs(len(tasks), "w"), tasks, args, root / "out")
    t_normal, _, wrong_n = run("normal", normal_only, tasks, args, root / "out")
    t_mixed, tally_m, wrong_m = run("mixed", mixed, tasks, args, root / "out")
    time.sleep(0.5)
    leaked = leaks([marker, str(root)], Path(os.environ["ISSUEBENCH_HOME"]))
    if outside.exists() or Path("/usr/soak-pwned").exists():
        leaked.append("a write outside the workspace landed")

    print(f"normal-only: {len(normal_only) / t_normal:.2f} instances/s ({t_normal:.1f}s)")
    print(f"mixed:       {len(mixed) / t_mixed:.2f} instances/s ({t_mixed:.1f}s)")
    print(f"throughput ratio mixed/normal: {(len(mixed) / t_mixed) / (len(normal_only) / t_normal):.3f}")
    print("mixed statuses:", ", ".join(f"{k[0]}:{k[1]}={v}" for k, v in sorted(tally_m.items())))
    for line in (wrong_n + wrong_m)[:20]:
        print("WRONG", line)
    for line in leaked[:20]:
        print("LEAK", line)
    print(f"verdicts wrong: {len(wrong_n) + len(wrong_m)}; leaks: {len(leaked)}")
    subprocess.run(["rm", "-rf", str(root)], check=False)
    return 1 if (wrong_n or wrong_m or leaked) else 0


if __name__ == "__main__":
    sys.exit(main())
