"""Validation overhead: wall time to validate a task against the time its test runs alone take.

Builds a small repository with N fixed-bug tasks, validates them with the real harness, sandbox
and a uv environment (built once, before timing), and prints per task: validation seconds, the
seconds the test commands themselves ran (inside the sandbox), and the ratio.

    .venv/bin/python benchmarks/validate_overhead.py [--tasks 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from issuebench.collect import CollectOptions, collect
from issuebench.collect.validation import harness_runner, validate
from issuebench.models import EnvSpec

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x", "GIT_CONFIG_NOSYSTEM": "1"}


def build(repo: Path, tasks: int) -> None:
    subprocess.run(["git", "init", "-q", "--initial-branch=main", str(repo)], check=True, env=ENV)

    def commit(files: dict[str, str], message: str) -> None:
        for rel, text in files.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=ENV)
        subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True, env=ENV)

    commit({"lib/__init__.py": "", **{f"lib/f{i}.py": f"def f{i}():\n    return 0\n" for i in range(tasks)},
            **{f"tests/test_f{i}.py": "".join(f"def test_keep_{j}():\n    assert True\n\n" for j in range(20))
               for i in range(tasks)}}, "init")
    for i in range(tasks):
        test = (repo / f"tests/test_f{i}.py").read_text()
        commit({f"lib/f{i}.py": f"def f{i}():\n    return 1\n",
                f"tests/test_f{i}.py": test + f"def test_fix():\n    from lib.f{i} import f{i}\n    assert f{i}() == 1\n"},
               f"Fix f{i} (#{i + 1})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("ISSUEBENCH_HOME", str(Path(tmp) / "home"))
        repos = Path(tmp) / "repos"
        build(repos / "bench__validate", args.tasks)
        spec = EnvSpec(python=f"{sys.version_info.major}.{sys.version_info.minor}", packages=["pytest"],
                       exclude_newer_source="none", test_cmd="python -m pytest -rA -p no:cacheprovider")
        tasks = collect(repos / "bench__validate", CollectOptions(run_setup=False)).tasks
        runner, with_env = harness_runner(repos_dir=repos, recipe=spec, work_dir=Path(tmp) / "work")
        tasks = [with_env(t) for t in tasks]
        validate(tasks[:1], runner, repeats=1)  # build the environment once, outside the timing
        result = validate(tasks, runner, repeats=args.repeats)
        total_v = total_t = 0.0
        for v in result.verdicts:
            total_v += v.seconds
            total_t += v.test_seconds
            print(f"{v.task.instance_id}: kept={v.kept} runs={v.runs} validate={v.seconds:.2f}s "
                  f"tests={v.test_seconds:.2f}s ratio={v.seconds / max(v.test_seconds, 1e-9):.2f}")
        print(f"overall: validation {total_v / len(result.verdicts):.2f}s per task, test runs alone "
              f"{total_t / len(result.verdicts):.2f}s, ratio {total_v / max(total_t, 1e-9):.2f}")


if __name__ == "__main__":
    main()
