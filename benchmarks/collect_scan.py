"""How fast `collect` scans history: commits per second on a generated 10,000-commit repository.

Baseline, measured in the same process: the naive walk, one `git show --name-only` per commit
(on a sample, extrapolated). The ratio is what the single streaming `git log` buys.

    .venv/bin/python benchmarks/collect_scan.py [--commits 10000]
    .venv/bin/python benchmarks/collect_scan.py --repo CLONE     # a real history, e.g. sympy

With --repo, the whole history of a fetched clone is collected (every branch and tag, versions
read, no environment set-up); the baseline is the previous design, one `git diff` process per
candidate, timed on a sample of candidates and extrapolated. Versions are then read again, in
batches as collect reads them, against one lookup per commit (its own `git cat-file` and
`git describe`), sampled. Wall clock and CPU seconds (this process and its git children) are
both printed: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from issuebench.collect import CollectOptions, collect
from issuebench.collect.history import git, walk_history
from issuebench.collect.versions import assign_versions
from issuebench.repos import version_rule

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x", "GIT_CONFIG_NOSYSTEM": "1"}


def generate(repo: Path, n: int) -> None:
    """n commits via git fast-import: every commit touches code, every 3rd also a test file,
    every 5th is a squash-merged PR "(#N)"."""
    subprocess.run(["git", "init", "-q", "--initial-branch=main", str(repo)], check=True, env=ENV)
    lines: list[str] = []
    for i in range(n):
        files = {f"pkg/mod_{i % 50}.py": f"VALUE = {i}\n"}
        if i % 3 == 0:
            files[f"tests/test_mod_{i % 20}.py"] = f"def test_{i}():\n    assert {i}\n"
        subject = f"Change {i} (#{i})" if i % 5 == 0 else f"Change {i}"
        message = f"{subject}\n\nBody of change {i}.\n".encode()
        lines.append("commit refs/heads/main")
        lines.append(f"committer b <b@x> {1_600_000_000 + i * 60} +0000")
        lines.append(f"data {len(message)}")
        lines.append(message.decode())
        for path, text in files.items():
            lines.append(f"M 100644 inline {path}")
            lines.append(f"data {len(text.encode())}")
            lines.append(text)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input="\n".join(lines).encode(),
                   check=True, env=ENV)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True, env=ENV)


def naive_rate(repo: Path, sample: int) -> float:
    shas = subprocess.run(["git", "rev-list", f"--max-count={sample}", "HEAD"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.split()
    start = time.perf_counter()
    for sha in shas:
        subprocess.run(["git", "show", "--name-only", "--format=%H%x00%P%x00%aI%x00%s%x00%b", sha],
                       cwd=repo, capture_output=True, check=True)
    return len(shas) / (time.perf_counter() - start)


def cpu_seconds() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def real_history(repo: Path, sample: int) -> None:
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = collect(repo, CollectOptions(run_setup=False))
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    stages = result.table.to_dict()["stages"]
    print(f"collect {repo.name}: {stages.get('commits scanned', 0):,} commits, "
          f"{stages.get('candidates', 0):,} pull requests, {len(result.tasks):,} tasks "
          f"in {wall:.1f}s wall, {cpu:.1f}s CPU")
    picked = result.tasks[:: max(1, len(result.tasks) // sample)][:sample]
    t0, c0 = time.perf_counter(), cpu_seconds()
    for task in picked:
        subprocess.run(["git", "diff", "--binary", task.base_commit, str(task.model_extra["commit"])],
                       cwd=repo, capture_output=True, check=True)
    per_wall = (time.perf_counter() - t0) / max(1, len(picked))
    per_cpu = (cpu_seconds() - c0) / max(1, len(picked))
    n = stages.get("candidates", 0)
    print(f"baseline (one git diff per candidate, {len(picked)} sampled): "
          f"{per_wall * n:.1f}s wall, {per_cpu * n:.1f}s CPU for the {n:,} candidates alone")
    print(f"ratio: {per_wall * n / wall:.1f}x wall, {per_cpu * n / max(cpu, 1e-9):.1f}x CPU")
    versions_against_one_at_a_time(result.repo_dir, result.tasks, sample)


def versions_against_one_at_a_time(repo: Path, tasks: list, sample: int) -> None:
    """Versions read again in batches (as collect reads them), against one find_version per
    commit the batches looked up (a reader and a describe per commit), sampled."""
    looked_up: dict[str, None] = {}  # each commit once (tasks share bases)
    batched = version_rule.find_versions

    def recording(repo_dir, commits, repo=None, reader=None):  # type: ignore[no-untyped-def]
        looked_up.update(dict.fromkeys(commits))
        return batched(repo_dir, commits, repo, reader)

    copies = [t.model_copy(update={"version": None, "environment_setup_commit": None}) for t in tasks]
    main_line = git(repo, "rev-list", "--first-parent", "HEAD").split()
    version_rule.find_versions = recording
    try:
        t0, c0 = time.perf_counter(), cpu_seconds()
        assign_versions(repo, copies, main_line)
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    finally:
        version_rule.find_versions = batched
    assert [t.version for t in copies] == [t.version for t in tasks]
    picked = list(looked_up)[:: max(1, len(looked_up) // sample)][:sample]
    t0, c0 = time.perf_counter(), cpu_seconds()
    for sha in picked:
        version_rule.find_version(repo, sha)
    per_wall = (time.perf_counter() - t0) / max(1, len(picked))
    per_cpu = (cpu_seconds() - c0) / max(1, len(picked))
    n = len(looked_up)
    print(f"versions in batches: {n:,} commits looked up in {wall:.1f}s wall, {cpu:.1f}s CPU; "
          f"one commit at a time ({len(picked)} sampled): {per_wall * n:.1f}s wall, {per_cpu * n:.1f}s CPU; "
          f"ratio {per_wall * n / max(wall, 1e-9):.1f}x wall, {per_cpu * n / max(cpu, 1e-9):.1f}x CPU")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=500, help="commits for the naive baseline")
    parser.add_argument("--repo", type=Path, help="collect this real clone instead")
    args = parser.parse_args()
    if args.repo:
        real_history(args.repo, min(args.sample, 200))
        return
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "bench__history"
        t0 = time.perf_counter()
        generate(repo, args.commits)
        print(f"generated {args.commits} commits in {time.perf_counter() - t0:.1f}s")

        t0 = time.perf_counter()
        walked = sum(1 for _ in walk_history(repo))
        walk_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        result = collect(repo, CollectOptions(include_commits=True, run_setup=False))
        collect_s = time.perf_counter() - t0
        table = result.table.to_dict()["stages"]

        naive = naive_rate(repo, args.sample)
        walk_rate = walked / walk_s
        print(f"history walk:   {walked} commits in {walk_s:.2f}s = {walk_rate:,.0f} commits/s")
        print(f"naive walk:     {naive:,.0f} commits/s (one git process per commit, {args.sample} sampled)")
        print(f"ratio:          {walk_rate / naive:.1f}x faster than one process per commit")
        print(f"full collect:   {table['commits scanned']} commits scanned, {table['candidates']} candidates, "
              f"{table['with tests']} with tests, in {collect_s:.2f}s = "
              f"{table['commits scanned'] / collect_s:,.0f} commits/s, "
              f"{table['candidates'] / collect_s:,.0f} candidates/s")


if __name__ == "__main__":
    main()
