"""SWE-bench Lite and Verified on real clones, in one pass from one commit: cold, then warm.

    .venv/bin/python benchmarks/swebench_pass.py --dataset swe-bench-lite-test.jsonl \\
        --dataset swe-bench-lite-dev.jsonl --dataset swe-bench-verified-test.jsonl \\
        --repos CLONES --output OUT --home NEW_HOME [--workers 2] \\
        [--repo owner/name ...] [--instance-ids ID ...] [--limit N] [--per-repo N] \\
        [--uv-cache-dir DIR] [--nice 10] [--report-only]

Every row whose repository is at hand (CLONES/owner__name, holding the row's base commit) runs
through `issuebench eval` as a user runs it, each step a child process measured from outside
(swebench_pass_measure.py). An id in several datasets runs once, with the first dataset's row.

1. cold, in NEW_HOME, which must be new or empty (uv's download cache stays unless
   --uv-cache-dir names another; the report says which):
   - environments: eval with a patch that cannot apply, so each instance builds (or finds) its
     environment, pristine checkout and instance layer exactly as eval does, and no test runs:
     this step's CPU is the environments' apart from the instances';
   - gold, then a no-op patch (a new file at the root, which fixes nothing);
2. warm, in the same home: gold and no-op again with `--no-cache` (every instance re-run).

Resumable: OUT/pass-state.json records each step's attempts; a pass started again with the same
arguments skips finished steps and runs, in an unfinished one, only the instances without a
result.json. The commit is checked: a pass continues only from the commit it started at.
It prints a Markdown report (OUT/swebench-pass.md, holding no path of this machine) and writes
every figure to OUT/swebench-pass.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import swebench_pass_report as report_mod  # a sibling of this script
from swebench_pass_measure import ChildUsage, disk_use, run_measured, source_commit
from swebench_pass_rows import Row, choose, mark_at_hand, merge_rows

from issuebench import config

ROOT = Path(__file__).resolve().parents[1]
STATE = "pass-state.json"
NOOP_PATCH = ("diff --git a/ISSUEBENCH_NOOP.txt b/ISSUEBENCH_NOOP.txt\nnew file mode 100644\n"
              "--- /dev/null\n+++ b/ISSUEBENCH_NOOP.txt\n@@ -0,0 +1 @@\n+this patch changes nothing\n")
# A well-formed diff of a file no repository has: eval gets as far as applying it, after the
# workspace, the environment and the instance's layer are made, and stops there.
NO_APPLY_PATCH = ("diff --git a/ISSUEBENCH_NO_SUCH_FILE.txt b/ISSUEBENCH_NO_SUCH_FILE.txt\n"
                  "--- a/ISSUEBENCH_NO_SUCH_FILE.txt\n+++ b/ISSUEBENCH_NO_SUCH_FILE.txt\n"
                  "@@ -1 +1 @@\n-this line is in no file\n+so this patch never applies\n")
# step -> (model name in the predictions, patch or None for gold, --no-cache)
STEP_RUNS = {
    report_mod.ENVIRONMENTS: ("envs-only", NO_APPLY_PATCH, False),
    report_mod.GOLD_COLD: ("gold", None, False),
    report_mod.NOOP_COLD: ("noop", NOOP_PATCH, False),
    report_mod.GOLD_WARM: ("gold", None, True),
    report_mod.NOOP_WARM: ("noop", NOOP_PATCH, True),
}


def eval_complaint(log: Path, keep: int = 4) -> list[str]:
    """eval's own error and hint lines at the end of a step's log (what to install, which field),
    so a step that stops says why where the pass is watched, not only in its log."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return []
    said = [line.strip() for line in lines if line.lstrip().startswith(("error:", "hint:"))]
    return [line[:400] for line in said[-keep:]]


class PassRefused(Exception):
    """A pass that cannot start or continue as asked: one line, exit 2."""


def read_results(output: Path, step: str) -> dict[str, dict]:
    model = STEP_RUNS[step][0]
    out = {}
    for path in sorted((output / "logs" / "run_evaluation" / step / model).glob("*/result.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue  # being written
        out[data["instance_id"]] = data
    return out


def environment_records(home: Path) -> list[dict]:
    root = home / "envs"
    records = []
    for manifest in sorted(root.glob("*/env.json")):
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except ValueError:
            continue
        built_at = data.get("built_at")
        epoch = dt.datetime.fromisoformat(built_at.replace("Z", "+00:00")).timestamp() if built_at else None
        records.append({"env_hash": manifest.parent.name, "state": "built", "build_seconds": data.get("build_seconds"),
                        "built_at_epoch": epoch, **build_profile(manifest.parent / "build.log")})
    for failed in sorted(root.glob("*.failed.json")):
        try:
            data = json.loads(failed.read_text(encoding="utf-8"))
        except ValueError:
            data = {}
        records.append({"env_hash": failed.name.split(".")[0], "state": "failed", "reason": data.get("reason", "")})
    return records


_TOOK = re.compile(r"# took (\d+(?:\.\d+)?)s, exit (-?\d+|None)$")


def build_profile(log: Path) -> dict:
    """Seconds of a build's timed steps (its log's `# took` lines): in all, in steps that failed (an
    attempt the build then made again otherwise), and in sandboxed steps (the project's own install)."""
    out = {"steps_seconds": 0.0, "failed_steps_seconds": 0.0, "sandboxed_seconds": 0.0}
    sandboxed = False
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        if line.startswith("$ "):
            sandboxed = line.startswith("$ (sandbox")
        elif m := _TOOK.match(line):
            seconds = float(m[1])
            out["steps_seconds"] += seconds
            out["failed_steps_seconds"] += seconds if m[2] != "0" else 0.0
            out["sandboxed_seconds"] += seconds if sandboxed else 0.0
    return out


def uv_cache_dir(env: dict[str, str]) -> Path | None:
    uv = Path(sys.executable).parent / "uv"
    try:
        out = subprocess.run([str(uv) if uv.exists() else "uv", "cache", "dir"], env=env, capture_output=True,
                             text=True, check=False, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(out) if out else None


def child_env(args: argparse.Namespace) -> dict[str, str]:
    env = {**os.environ, "ISSUEBENCH_HOME": str(args.home)}
    if args.uv_cache_dir:
        env["UV_CACHE_DIR"] = str(args.uv_cache_dir)
    return env


def eval_argv(args: argparse.Namespace, step: str, predictions: str, ids: list[str]) -> list[str]:
    argv = ["nice", "-n", str(args.nice)] if args.nice else []
    argv += [str(Path(sys.executable).parent / "issuebench"), "eval", "--dataset", str(args.output / "tasks.jsonl"),
             "--predictions", predictions, "--repos", str(args.repos), "--output", str(args.output),
             "--run-id", step, "--workers", str(args.workers), "--timeout", str(args.timeout),
             "--python-fallback", args.python_fallback]
    if STEP_RUNS[step][2]:
        argv.append("--no-cache")
    return [*argv, "--instance-ids", *ids]


def predictions_file(args: argparse.Namespace, step: str, ids: list[str]) -> str:
    model, patch, _ = STEP_RUNS[step]
    if patch is None:
        return "gold"
    path = args.output / f"predictions-{model}.jsonl"
    path.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": model, "model_patch": patch}) + "\n"
                            for i in ids), encoding="utf-8")
    return str(path)


def load_state(args: argparse.Namespace, ids: list[str], source: dict) -> dict:
    """The pass's state: new (the home must hold nothing yet) or the one this --output continues."""
    path = args.output / STATE
    if args.report_only and not path.exists():
        raise PassRefused(f"--output {args.output}: no pass there yet (no {STATE}); run it first")
    if path.exists():
        state = json.loads(path.read_text(encoding="utf-8"))
        if state["source"]["commit"] != source["commit"]:
            raise PassRefused(f"--output {args.output}: this pass started at commit {state['source']['commit'][:12]}, "
                              f"the checkout is at {source['commit'][:12]}; check that commit out or use a new --output")
        if Path(state["home"]) != args.home:
            raise PassRefused(f"--home: this pass runs in {state['home']}; give that one or a new --output")
        if state["ids"] != ids:
            raise PassRefused(f"--output {args.output}: this pass runs {len(state['ids'])} other rows; give the "
                              "same rows (datasets, --repo, --instance-ids, --limit, --per-repo) or a new --output")
        return state
    if args.home.exists() and any(args.home.iterdir()):
        raise PassRefused(f"--home {args.home} already holds a cache: a cold pass needs a new or empty folder")
    env = child_env(args)
    uv_cache = uv_cache_dir(env)
    uv_before = disk_use([("uv", uv_cache, [])]).total if uv_cache else 0
    return {"source": source, "home": str(args.home), "ids": ids, "started": _now(),
            "load_start": _load(), "uv_cache": str(uv_cache) if uv_cache else None,
            "uv_cache_own": bool(args.uv_cache_dir), "uv_cache_bytes_at_start": uv_before,
            "steps": {step: {"attempts": [], "done": False} for step in report_mod.STEPS}}


def save_state(args: argparse.Namespace, state: dict) -> None:
    tmp = args.output / (STATE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
    tmp.replace(args.output / STATE)


def run_step(args: argparse.Namespace, state: dict, step: str, ids: list[str]) -> None:
    record = state["steps"][step]
    if record["done"]:
        return
    # An attempt recorded as started and never finished was killed without being waited for.
    for attempt in record["attempts"]:
        if "wall_seconds" not in attempt:
            attempt["unmeasured"] = True
    done = read_results(args.output, step)
    todo = [i for i in ids if i not in done]
    if todo:
        attempt = {"started_epoch": time.time(), "instances": len(todo), "load_start": _load()}
        record["attempts"].append(attempt)
        save_state(args, state)
        print(f"{step}: {len(todo)} instance(s)", flush=True)
        usage: ChildUsage = run_measured(eval_argv(args, step, predictions_file(args, step, todo), todo),
                                         env=child_env(args), log=args.output / f"{step}.log")
        attempt.update(usage.as_dict(), ended_epoch=time.time(), load_end=_load())
        save_state(args, state)
        if usage.interrupted:
            raise KeyboardInterrupt
        if usage.returncode != 0:
            log = args.output / f"{step}.log"
            raise PassRefused(f"{step}: issuebench eval exited {usage.returncode}; its output is in {log}"
                              + "".join(f"\n  {line}" for line in eval_complaint(log))
                              + "\n  mend what it says, then run the same command again: the pass continues")
    record["done"] = True
    save_state(args, state)


def measure_disk(args: argparse.Namespace, state: dict) -> dict:
    home = args.home
    uv = Path(state["uv_cache"]) if state.get("uv_cache") else None
    named = [("environments", home / "envs", [home / "envs" / "layers"]),
             ("instance layers", home / "envs" / "layers", []),
             ("pristine checkouts", home / "templates", []),
             ("compile cache", home / "compile-cache", []),
             ("workspaces left", config.workspaces_root(home), []),
             ("result cache", home / "results", []),
             ("the rest of ISSUEBENCH_HOME", home,
              [home / n for n in ("envs", "templates", "compile-cache", "work", "results")]),
             ("run logs and artifacts", args.output / "logs", [])]
    if uv is not None:
        named.append(("uv's cache" + ("" if state.get("uv_cache_own") else ", kept from before the pass"), uv, []))
    use = disk_use(named)
    return {"folders": use.folders, "total": use.total}


def make_report(args: argparse.Namespace, state: dict, rows: list[Row], ids: list[str]) -> dict:
    results = {step: read_results(args.output, step) for step in report_mod.STEPS}
    in_pass = set(ids)
    row_dicts = [{"instance_id": r.instance_id, "repo": r.repo, "datasets": r.datasets, "at_hand": r.at_hand,
                  "in_pass": r.instance_id in in_pass, "differs": r.differs} for r in rows]
    usage = {s: state["steps"][s]["attempts"] for s in report_mod.STEPS}
    spans = {s: [(a["started_epoch"], a.get("ended_epoch", a["started_epoch"])) for a in usage[s]]
             for s in report_mod.STEPS}
    versions = sorted({str(r.get("harness_version")) for step in results.values() for r in step.values()})
    uv_note = (f"uv's download cache was kept from before the pass ({state['uv_cache_bytes_at_start'] / 2**30:.2f} "
               "GiB at the start): packages it held were not downloaded again"
               if not state.get("uv_cache_own") else
               f"uv's cache was a folder of the pass's own ({state['uv_cache_bytes_at_start'] / 2**30:.2f} GiB at the start)")
    installed = subprocess.run([sys.executable, "-c", "import issuebench; print(issuebench.__file__)"],
                               capture_output=True, text=True, check=False).stdout.strip()
    meta = {**state["source"], "version": _version(), "harness_versions": versions, "started": state["started"],
            "finished": state.get("finished", "not yet"), "cores": os.cpu_count(), "workers": args.workers,
            "load_start": state.get("load_start"), "load_end": state.get("load_end"), "uv_cache_note": uv_note,
            "command": _command(args),
            "source_note": "" if installed.startswith(str(ROOT / "src")) else
            "the issuebench that ran is not this checkout's source (install it editable: make install)"}
    disk = state.get("disk") or measure_disk(args, state)
    return report_mod.summarise(meta, row_dicts, results, usage, environment_records(args.home), disk, spans)


def _command(args: argparse.Namespace) -> str:
    parts = ["python benchmarks/swebench_pass.py", *(f"--dataset {p.name}" for p in args.dataset),
             "--repos CLONES --output OUT --home NEW_HOME", f"--workers {args.workers}"]
    parts += [f"--repo {r}" for r in args.repo]
    if args.instance_ids:
        parts.append("--instance-ids " + " ".join(args.instance_ids))
    parts += [f"--limit {args.limit}"] if args.limit is not None else []
    parts += [f"--per-repo {args.per_repo}"] if args.per_repo is not None else []
    parts += [f"--nice {args.nice}"] if args.nice else []
    return " ".join(parts)


def _version() -> str:
    from issuebench import __version__

    return __version__


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", action="append", type=Path, required=True, help="JSONL rows (repeat; first wins)")
    ap.add_argument("--repos", type=Path, required=True, help="folder of clones named owner__name")
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True, help="a new ISSUEBENCH_HOME for the cold pass")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--python-fallback", default="nearest")
    ap.add_argument("--repo", action="append", default=[], help="only these repositories (repeat)")
    ap.add_argument("--instance-ids", nargs="+", default=[])
    ap.add_argument("--limit", type=int, default=None, help="the first N rows at hand")
    ap.add_argument("--per-repo", type=int, default=None, help="the first N rows at hand of each repository")
    ap.add_argument("--uv-cache-dir", type=Path, default=None,
                    help="uv's cache for the pass (default: uv's own, kept; a new folder downloads everything)")
    ap.add_argument("--nice", type=int, default=0, help="run each eval under nice -n N")
    ap.add_argument("--report-only", action="store_true", help="run nothing; report what OUT holds")
    args = ap.parse_args(argv)
    for path in args.dataset:
        if not path.is_file():
            raise PassRefused(f"--dataset {path}: no such file")
    if not args.repos.is_dir():
        raise PassRefused(f"--repos {args.repos}: no such folder (give the folder of owner__name clones)")
    args.output, args.home, args.repos = args.output.resolve(), args.home.resolve(), args.repos.resolve()
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        datasets = [(p.stem, [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()])
                    for p in args.dataset]
        rows = merge_rows(datasets)
        mark_at_hand(rows, args.repos)
        chosen = choose(rows, args.repo, args.instance_ids, args.limit, args.per_repo)
        ids = [r.instance_id for r in chosen]
        if not ids:
            raise PassRefused("no row is at hand: check --repos (owner__name clones) and the filters")
        args.output.mkdir(parents=True, exist_ok=True)
        source = source_commit(ROOT)
        state = load_state(args, ids, source)
        if not args.report_only:
            (args.output / "tasks.jsonl").write_text("".join(json.dumps(r.data) + "\n" for r in chosen),
                                                     encoding="utf-8")
            save_state(args, state)
            for step in report_mod.STEPS:
                run_step(args, state, step, ids)
            if "finished" not in state:
                state.update(finished=_now(), load_end=_load())
                state["disk"] = measure_disk(args, state)
                save_state(args, state)
    except PassRefused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: run the same command again to continue the pass", file=sys.stderr)
        return 130
    report = make_report(args, state, rows, ids)
    text = report_mod.render(report)
    (args.output / "swebench-pass.md").write_text(text, encoding="utf-8")
    (args.output / "swebench-pass.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
