"""Real SWE-bench Lite tasks end to end without Docker, repositories rebuilt from release sdists.

    .venv/bin/python benchmarks/lite_from_sdists.py LITE.jsonl [--repos pallets/flask psf/requests ...]

GitHub is out of reach here, so for each task the repository is the sdist of the newest release of
the task's version published before the task (`repo from-pypi`'s fetcher), committed as the base.
A task counts as reproduced when its gold patch and test patch apply to that tree. For each such
task it reports: gold resolved, and whether the FAIL_TO_PASS tests fail without the fix (the test
patch alone). It prints one line per task and a summary, and writes JSON with --json FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from packaging.version import InvalidVersion, Version

from issuebench.collect.pypi_history import download_sdist, extract_sdist, index_versions, sdist_date
from issuebench.datasets import load_tasks
from issuebench.harness import build_context, run_evaluation, run_tests
from issuebench.models import InstanceStatus, Prediction, Task

PROJECTS = {"pallets/flask": "flask", "psf/requests": "requests", "pytest-dev/pytest": "pytest"}
GIT_ID = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
          "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def releases_of(project: str, version: str, cache: dict[str, list[str]]) -> list[str]:
    """Final releases X.Y.* of a task's version X.Y, newest first."""
    if project not in cache:
        cache[project] = index_versions(project)
    try:
        want = Version(version)
    except InvalidVersion:
        return []
    out = []
    for v in cache[project]:
        parsed = Version(v)
        if parsed.release[:2] == want.release[:2]:
            out.append(v)
    return sorted(out, key=Version, reverse=True)


def applies(tree: Path, patch: str) -> bool:
    return subprocess.run(["git", "apply", "--check", "-"], cwd=tree, input=patch, text=True,
                          capture_output=True).returncode == 0


def rebuild_repo(task: Task, project: str, work: Path, downloads: Path, cache: dict) -> tuple[Path, str] | None:
    """A repository folder holding the task's repo at a release sdist the task's patches apply to."""
    for release in releases_of(project, task.version or "", cache):
        sdist = download_sdist(project, release, downloads / project / release)
        if sdist is None or (task.created_at and sdist_date(sdist).isoformat() > task.created_at):
            continue
        root = work / task.instance_id
        tree = extract_sdist(sdist, root / "x")
        if not (applies(tree, task.patch) and applies(tree, task.test_patch)):
            continue
        repos = root / "repos"
        repos.mkdir(parents=True)
        dest = repos / task.repo.replace("/", "__")
        tree.rename(dest)
        env = {**os.environ, **GIT_ID, "GIT_AUTHOR_DATE": sdist_date(sdist).isoformat(),
               "GIT_COMMITTER_DATE": sdist_date(sdist).isoformat()}
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", f"{project} {release} sdist"],
                     ["tag", release]):
            subprocess.run(["git", *args], cwd=dest, env=env, check=True, capture_output=True)
        base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=dest, capture_output=True, text=True).stdout.strip()
        return repos, f"{release}@{base}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lite", help="SWE-bench Lite rows (.jsonl)")
    parser.add_argument("--repos", nargs="+", default=list(PROJECTS))
    parser.add_argument("--max", type=int, default=None, help="at most this many tasks per repository")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    os.environ.setdefault("ISSUEBENCH_HOME", tempfile.mkdtemp(prefix="ib-lite-"))
    tasks = [t for t in load_tasks(args.lite) if t.repo in args.repos]
    if args.max:
        kept: list[Task] = []
        for task in tasks:
            if sum(t.repo == task.repo for t in kept) < args.max:
                kept.append(task)
        tasks = kept
    rows, cache = [], {}
    with tempfile.TemporaryDirectory(prefix="ib-lite-work-") as tmp:
        work, downloads = Path(tmp) / "work", Path(tmp) / "dl"
        for task in tasks:
            start = time.monotonic()
            found = rebuild_repo(task, PROJECTS[task.repo], work, downloads, cache)
            if found is None:
                rows.append({"instance_id": task.instance_id, "reproduced": False})
                print(f"{task.instance_id:32} no release sdist of {task.version} takes its patches")
                continue
            repos, where = found
            release, base = where.split("@")
            task = task.model_copy(update={"base_commit": base, "environment_setup_commit": base})
            ctx = build_context(output_dir=Path(tmp) / "out", run_id="lite", repos_dir=repos, timeout=900,
                                use_cache=False)
            gold = run_evaluation([task], [Prediction(instance_id=task.instance_id, model_name_or_path="gold",
                                                      model_patch=task.patch)], ctx, workers=1).reports[0]
            before = run_tests(task, None, ctx)
            f2p_fail_before = before.status in (InstanceStatus.UNRESOLVED, InstanceStatus.RESOLVED) and all(
                before.status_map.get(t) is None or before.status_map[t].value in ("FAILED", "ERROR")
                for t in task.FAIL_TO_PASS)
            row = {"instance_id": task.instance_id, "reproduced": True, "release": release,
                   "gold_status": gold.status.value, "f2p_fail_without_fix": f2p_fail_before,
                   "exclude_newer": gold.exclude_newer, "reason": gold.reason[:200],
                   "seconds": round(time.monotonic() - start, 1)}
            rows.append(row)
            print(f"{task.instance_id:32} {release:8} gold={gold.status.value:14} "
                  f"f2p-fails-before={f2p_fail_before!s:5} {row['seconds']:6.1f}s  {gold.reason[:80]}")
    reproduced = [r for r in rows if r["reproduced"]]
    resolved = [r for r in reproduced if r["gold_status"] == "resolved"]
    print(f"\n{len(rows)} tasks; {len(reproduced)} reproducible from a release sdist; "
          f"gold resolved {len(resolved)}/{len(reproduced)}; "
          f"needs_network {sum(r['gold_status'] == 'needs_network' for r in reproduced)}; "
          f"FAIL_TO_PASS failing without the fix {sum(r['f2p_fail_without_fix'] for r in reproduced)}/{len(reproduced)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
