"""The `next:` lines of the quick verbs: one unbroken line, quoted for a shell, and it runs."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.cli.next_step import command

ROW = {"instance_id": "o__r-1", "repo": "o/r", "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["t2"],
       "base_commit": "a" * 40, "patch": "", "test_patch": "", "problem_statement": "The parser drops a line."}


def next_argv(output: str) -> list[str]:
    [line] = [line for line in output.splitlines() if line.startswith("next: ")]
    argv = shlex.split(line.removeprefix("next: "))
    assert argv[0] == "issuebench"  # under the test runner; from a script, the script's path
    return argv[1:]


def test_a_command_is_quoted_and_leaves_out_what_is_unset():
    line = command("eval", options={"--dataset": Path("my tasks.jsonl"), "--predictions": "gold", "--repos": None,
                                    "--no-sandbox": True, "--offline": False, "--instance-ids": ["a", "b"]})
    assert shlex.split(line)[1:] == ["eval", "--dataset", "my tasks.jsonl", "--predictions", "gold",
                                     "--no-sandbox", "--instance-ids", "a,b"]


def test_regrade_prints_the_report_to_run_and_it_runs(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    (tmp_path / "logs" / "o__r-1").mkdir(parents=True)
    (tmp_path / "logs" / "o__r-1" / "test_output.txt").write_text("PASSED t1\nPASSED t2\n")
    out = tmp_path / "a folder with spaces"  # the line is quoted: it still runs
    result = CliRunner().invoke(app, ["regrade", "--logs", str(tmp_path / "logs"), "-d", str(data),
                                      "--parser", "pytest", "-o", str(out)], env={"COLUMNS": "40"})
    assert result.exit_code == 0, result.output
    argv = next_argv(result.output)
    assert argv[0] == "report"
    report = CliRunner().invoke(app, argv)
    assert report.exit_code == 0 and "0/1" in report.output, report.output  # the log has no apply line


def test_perturb_prints_the_eval_of_its_copy(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    result = CliRunner().invoke(app, ["perturb", str(data), "--reword", "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 0, result.output
    assert next_argv(result.output) == ["eval", "--dataset", str(tmp_path / "p.jsonl"), "--predictions", "gold"]
