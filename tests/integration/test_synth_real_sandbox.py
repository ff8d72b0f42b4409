"""synth end to end on a repository built here: real git, uv environment, coverage and sandbox.

The project has two modules with tests. synth breaks them, keeps what the covering tests catch,
and the rows it writes are graded by `eval` as they are: resolved by the gold patch, not by a
patch that changes nothing. A second run on the same output folder resumes instead of redoing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app
from tests.gitrepo import init_repo

pytestmark = pytest.mark.slow

CORE = '''def add(a, b):
    return a + b


def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
'''
TEXT = '''def shout(s):
    return s.upper() + "!"
'''
TESTS_CORE = '''from calc.core import add, clamp


def test_add():
    assert add(2, 3) == 5


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0
    assert clamp(2, 0, 3) == 2
'''
TESTS_TEXT = '''from calc.text import shout


def test_shout():
    assert shout("hi") == "HI!"
'''
NOOP = ("diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n"
        "+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing\n")


def test_synth_writes_tasks_that_eval_grades_and_resumes(tmp_path: Path) -> None:
    src = tmp_path / "calc"
    init_repo(src, {"calc/__init__.py": "", "calc/core.py": CORE, "calc/text.py": TEXT,
                    "tests/test_core.py": TESTS_CORE, "tests/test_text.py": TESTS_TEXT},
              date="2024-01-02T00:00:00Z")
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(f'python = "{sys.version_info.major}.{sys.version_info.minor}"\n'
                      'packages = ["pytest"]\nexclude_newer_source = "none"\n'
                      'test_cmd = "python -m pytest -rA"\n')
    out = tmp_path / "out"
    cli = CliRunner()
    args = ["synth", str(src), "--recipe", str(recipe), "-o", str(out), "--name", "acme/calc",
            "--generators", "op_flip,remove_return,const", "--limit", "8", "--seed", "1"]
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    summary = json.loads((out / "yield.json").read_text())
    assert summary["generators"]["total"]["candidates"] == 8
    assert rows and len(rows) == summary["kept"]
    for row in rows:
        assert row["test_patch"] == "" and row["FAIL_TO_PASS"] and row["repo"] == "acme/calc"
        assert row["patch"].startswith("diff --git a/calc/")
        # The issue never quotes the line the bug changed.
        removed = [line[1:].strip() for line in row["patch"].splitlines()
                   if line.startswith("+") and not line.startswith("+++")]
        assert not any(line and line in row["problem_statement"] for line in removed), row["problem_statement"]
    # Bugs in text.py are only checked by test_text.py: covering tests, not the suite.
    text_rows = [r for r in rows if "calc/text.py" in r["patch"]]
    assert all(all(t.startswith("tests/test_text.py") for t in r["FAIL_TO_PASS"]) for r in text_rows)

    dataset = out / "tasks.jsonl"
    gold = cli.invoke(app, ["eval", "-d", str(dataset), "-p", "gold", "--repos", str(out / "repos"),
                            "-o", str(tmp_path / "eval"), "--run-id", "gold", "-w", "2"])
    assert gold.exit_code == 0, gold.output
    preds = tmp_path / "noop.jsonl"
    preds.write_text("".join(json.dumps({"instance_id": r["instance_id"], "model_name_or_path": "noop",
                                         "model_patch": NOOP}) + "\n" for r in rows))
    noop = cli.invoke(app, ["eval", "-d", str(dataset), "-p", str(preds), "--repos", str(out / "repos"),
                            "-o", str(tmp_path / "eval"), "--run-id", "noop", "-w", "2"])
    assert noop.exit_code == 0, noop.output
    gold_summary = json.loads(next((tmp_path / "eval").glob("gold.gold.json")).read_text())
    noop_summary = json.loads(next((tmp_path / "eval").glob("noop.noop.json")).read_text())
    assert gold_summary["resolved_instances"] == len(rows)
    assert noop_summary["resolved_instances"] == 0

    lines_before = (out / "candidates.jsonl").read_text().count("\n")
    again = cli.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert (out / "candidates.jsonl").read_text().count("\n") == lines_before  # nothing redone
    assert (out / "tasks.jsonl").read_text().count("\n") == len(rows)


def test_synth_refuses_a_folder_that_is_not_a_repository(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["synth", str(tmp_path), "-o", str(tmp_path / "out"),
                                   "--recipe", str(tmp_path / "missing.toml")])
    assert res.exit_code == 2
    assert "error:" in res.output and "Traceback" not in res.output


def test_synth_keeps_exactly_max_tasks_and_takes_instance_ids(tmp_path: Path) -> None:
    """--max-tasks N keeps N, not one more from a worker beside the last one or from the phase of
    combinations after it; -i redoes the candidates it names; the printed eval grades the tasks."""
    import shlex

    src = tmp_path / "calc"
    init_repo(src, {"calc/__init__.py": "", "calc/core.py": CORE, "calc/text.py": TEXT,
                    "tests/test_core.py": TESTS_CORE, "tests/test_text.py": TESTS_TEXT},
              date="2024-01-02T00:00:00Z")
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(f'python = "{sys.version_info.major}.{sys.version_info.minor}"\n'
                      'packages = ["pytest"]\nexclude_newer_source = "none"\n'
                      'test_cmd = "python -m pytest -rA"\n')
    cli = CliRunner()
    out = tmp_path / "out"
    common = ["--recipe", str(recipe), "--name", "acme/calc", "--generators", "op_flip,remove_return,const,combine",
              "--seed", "1"]
    res = cli.invoke(app, ["synth", str(src), "-o", str(out), *common, "--max-tasks", "2", "-w", "2"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert len(rows) == 2, res.output
    assert json.loads((out / "yield.json").read_text())["kept"] == 2
    # Off a terminal (as here), a line for the baseline and one per candidate validated, as it ends.
    assert "baseline: the suite under coverage" in res.output
    for cand in map(json.loads, (out / "candidates.jsonl").read_text().splitlines()):
        if cand["status"] not in ("syntax_error", "equivalent", "duplicate"):  # decided without a run
            assert f"{cand['generator']} {cand['id']}: {cand['status']}" in res.output, cand

    [line] = [ln for ln in res.output.splitlines() if ln.startswith("next: ")]
    argv = shlex.split(line.removeprefix("next: "))
    graded = cli.invoke(app, [*argv[1:], "-o", str(tmp_path / "eval"), "--run-id", "gold"])
    assert graded.exit_code == 0, graded.output
    assert "2/2 resolved" in graded.output

    # A rerun asking for more keeps up to the new number, counting what the folder holds.
    more = cli.invoke(app, ["synth", str(src), "-o", str(out), *common, "--max-tasks", "3"])
    assert more.exit_code == 0, more.output
    assert len((out / "tasks.jsonl").read_text().splitlines()) == 3

    # -i: only the named task's candidate is validated, into a fresh folder, as the same task.
    wanted = rows[0]["instance_id"]
    again = tmp_path / "again"
    one = cli.invoke(app, ["synth", str(src), "-o", str(again), *common, "-i", wanted])
    assert one.exit_code == 0, one.output
    assert [json.loads(ln)["instance_id"] for ln in (again / "tasks.jsonl").read_text().splitlines()] == [wanted]
    assert len((again / "candidates.jsonl").read_text().splitlines()) == 1
