"""Each verb's `next:` line is the command to run next, and it works as printed.

On a repository built here, with the real command (`.venv/bin/issuebench` in a subprocess), the real
uv environment and sandbox: collect -> validate -> eval -> report, each run from the line the one
before printed; then infer and agent on the validated tasks with a replay model, and the eval each
of them prints, which must keep the folder of clones (it once dropped --repos and failed).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from issuebench.datasets import load_tasks
from issuebench.llm import solve_script
from tests.unit.test_collect_mining import Repo

pytestmark = pytest.mark.slow

ISSUEBENCH = Path(sys.executable).with_name("issuebench")
CORE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = "from calc.core import add, mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, (argv, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


def printed_next(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The one `next:` line of a run, as argv, its program checked to be issuebench."""
    lines = [line.removeprefix("next: ") for line in proc.stdout.splitlines() if line.startswith("next: ")]
    assert len(lines) == 1, proc.stdout
    argv = shlex.split(lines[0])
    assert argv[0] == "issuebench" or Path(argv[0]).resolve() == ISSUEBENCH.resolve(), argv
    return [str(ISSUEBENCH), *argv[1:]]


def test_each_printed_next_command_runs(tmp_path: Path) -> None:
    clones = tmp_path / "clones"
    repo = Repo(clones / "acme__calc")
    repo.commit("init", {"calc/__init__.py": "", "calc/core.py": CORE, "tests/test_core.py": TESTS})
    repo.commit("Fix add (#1)", {"calc/core.py": CORE.replace("a - b", "a + b"),
                                 "tests/test_core.py": TESTS + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"})
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(f'python = "{sys.version_info.major}.{sys.version_info.minor}"\n'
                      'packages = ["pytest"]\nexclude_newer_source = "none"\n'
                      'test_cmd = "python -m pytest -rA -p no:cacheprovider"\n')

    collected = run([str(ISSUEBENCH), "collect", str(clones / "acme__calc"), "-o", "cand.jsonl", "--recipe",
                     str(recipe), "--quiet"], tmp_path)
    validate = printed_next(collected)
    assert validate[1:3] == ["validate", "cand.jsonl"] and validate[validate.index("--repos") + 1] == str(clones)

    validated = run(validate, tmp_path)
    evaluate = printed_next(validated)
    assert "--repos" in evaluate and "gold" in evaluate
    assert [json.loads(line)["instance_id"] for line in (tmp_path / "tasks.jsonl").read_text().splitlines()] \
        == ["acme__calc-1"]

    graded = run(evaluate, tmp_path)
    report = printed_next(graded)
    assert report[1] == "report"
    reported = run(report, tmp_path)
    assert "1/1" in reported.stdout

    # infer and agent on the tasks just made: their eval keeps --repos, and grades the patches.
    tasks = load_tasks(tmp_path / "tasks.jsonl")
    for mode in ("infer", "agent"):
        script = tmp_path / f"{mode}.replay.json"
        script.write_text(json.dumps(solve_script(tasks, mode=mode)))
        predicted = run([str(ISSUEBENCH), mode, "-d", "tasks.jsonl", "-o", f"{mode}-out", "--model",
                         f"replay:{script}", "--repos", str(clones)], tmp_path)
        again = printed_next(predicted)
        assert again[again.index("--repos") + 1] == str(clones), again
        assert again[again.index("--predictions") + 1].endswith(f"{mode}-out/preds.jsonl")
        regraded = run([*again, "--run-id", mode], tmp_path)
        summary = json.loads(next(tmp_path.glob(f"*.{mode}.json")).read_text())
        assert summary["resolved_instances"] == 1, regraded.stdout
        assert printed_next(regraded)[1] == "report"
