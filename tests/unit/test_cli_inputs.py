"""Bad inputs and options: one clear line, exit 2, never a traceback, never a silent exit 0.

Every case here fails before any instance runs, so none of them needs a sandbox or a repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.datasets import load_tasks
from issuebench.errors import InputError

ROW = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "patch": "", "test_patch": "",
       "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["t2"]}


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def cli(*args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


@pytest.fixture()
def data(tmp_path: Path) -> dict[str, Path]:
    preds = [{"instance_id": "o__r-1", "model_name_or_path": "m", "model_patch": "diff --git a/x b/x\n"}]
    return {"dataset": jsonl(tmp_path / "d.jsonl", [ROW]), "preds": jsonl(tmp_path / "p.jsonl", preds),
            "out": tmp_path / "out"}


def eval_args(data: dict[str, Path], *extra: str) -> list[str]:
    return ["eval", "-d", str(data["dataset"]), "-p", str(data["preds"]), "-o", str(data["out"]), *extra]


# -- item 2: the fields grading needs ------------------------------------------------------------

@pytest.mark.parametrize(("change", "words"), [
    ({"FAIL_TO_PASS": None}, "required field is missing"),
    ({"PASS_TO_PASS": None}, "required field is missing"),
    ({"FAIL_TO_PASS": "not json"}, "not a JSON list"),
    ({"FAIL_TO_PASS": [1, 2]}, "string"),
    ({"FAIL_TO_PASS": []}, "any patch would resolve"),
])
def test_a_row_without_usable_test_lists_is_an_input_error(tmp_path, change, words):
    row = {k: v for k, v in {**ROW, **change}.items() if v is not None}
    path = jsonl(tmp_path / "d.jsonl", [{**ROW, "instance_id": "o__r-0"}, row])
    with pytest.raises(InputError) as err:
        load_tasks(path)
    field = next(iter(change))
    assert err.value.line == 2 and err.value.field.startswith(field) and words in err.value.message
    # Candidates on their way to `validate` have no lists yet; analysis reads them too.
    if change[field] in (None, []):
        assert getattr(load_tasks(path, require_tests=False)[1], field) == []


def test_regrade_needs_no_base_commit(tmp_path):
    row = {k: v for k, v in ROW.items() if k not in ("base_commit", "repo")}
    path = jsonl(tmp_path / "d.jsonl", [row])
    with pytest.raises(InputError):
        load_tasks(path)
    [task] = load_tasks(path, needs_checkout=False)
    assert task.repo == "o/r" and task.FAIL_TO_PASS == ["t1"]
    logs = tmp_path / "logs" / "o__r-1"
    logs.mkdir(parents=True)
    (logs / "test_output.txt").write_text("PASSED t1\nPASSED t2\n")
    result = cli("regrade", "--logs", str(tmp_path / "logs"), "--dataset", str(path), "--parser", "pytest")
    assert result.exit_code == 0, result.output
    assert "regraded 1 log(s)" in result.output


# -- items 4, 5, 7: options checked before anything runs ---------------------------------------

@pytest.mark.parametrize(("extra", "words"), [
    (["--run-id", "a/b"], "option --run-id"),
    (["--run-id", ".."], "option --run-id"),
    (["--workers", "0"], "option --workers"),
    (["--workers", "-1"], "option --workers"),
    (["--timeout", "0"], "option --test-timeout"),  # the older spelling, said by its name
    (["--test-timeout", "-5"], "option --test-timeout"),
    (["--python-fallback", "maybe"], "option --python-fallback"),
    (["--backend", "podman"], "option --backend"),
])
def test_bad_options_are_one_line_and_exit_2(data, extra, words):
    result = cli(*eval_args(data, *extra))
    assert result.exit_code == 2, result.output
    assert words in result.output and "<input>" not in result.output
    assert not data["out"].exists()  # nothing ran


def test_an_output_that_is_a_file_is_refused_before_the_run(data):
    data["out"].write_text("not a folder")
    result = cli(*eval_args(data))
    assert result.exit_code == 2 and "option --output" in result.output


def test_predictions_naming_a_folder_and_a_corrupt_parquet(tmp_path, data):
    folder = tmp_path / "x.jsonl"
    folder.mkdir()
    result = cli("eval", "-d", str(data["dataset"]), "-p", str(folder), "-o", str(data["out"]))
    assert result.exit_code == 2 and "is a folder" in result.output
    bad = tmp_path / "d.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    result = cli("eval", "-d", str(bad), "-p", "gold", "-o", str(data["out"]))
    assert result.exit_code == 2 and "not a readable parquet file" in result.output


# -- a folder of clones that is not there is refused, by every verb that takes one ----------------

def _verbs_with_a_repos_option() -> set[str]:
    import click
    import typer.main

    found: set[str] = set()

    def walk(command: click.Command, path: list[str]) -> None:
        if any(opt in ("--repos", "--repos-dir") for p in command.params for opt in p.opts):
            found.add(" ".join(path))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def test_every_verb_refuses_a_repos_folder_that_is_not_there(tmp_path, data):
    missing = str(tmp_path / "no-such-clones")
    out = tmp_path / "out"
    d = str(data["dataset"])
    verbs = {
        "eval": ["eval", "-d", d, "-p", str(data["preds"]), "-o", str(out), "--repos", missing],
        "validate": ["validate", d, "-o", str(out / "tasks.jsonl"), "--repos-dir", missing],
        "audit": ["audit", d, "--output-dir", str(out), "--repos-dir", missing],
        "perturb": ["perturb", d, "--rename", "-o", str(out / "p.jsonl"), "--repos-dir", missing],
        "envs build": ["envs", "build", d, "--repos-dir", missing],
        "agent": ["agent", "-d", d, "-o", str(out), "--model", "replay:none.json", "--repos", missing],
        "infer": ["infer", "-d", d, "-o", str(out), "--model", "replay:none.json", "--repos", missing],
    }
    assert set(verbs) == _verbs_with_a_repos_option()  # a new verb with the option joins this test
    for verb, args in verbs.items():
        result = cli(*args)
        assert result.exit_code == 2, (verb, result.output)
        [line] = result.output.strip().splitlines()  # one line: the option, the path, what to pass
        assert "option --repos" in line and missing in line and "does not exist" in line, (verb, line)
        assert not out.exists(), verb  # refused before anything ran or was written


def test_a_repos_path_that_is_a_file_is_refused(tmp_path, data):
    clones = tmp_path / "clones.txt"
    clones.write_text("not a folder")
    result = cli(*eval_args(data, "--repos-dir", str(clones)))
    assert result.exit_code == 2
    assert "option --repos:" in result.output and "is a file, not a folder" in result.output
    assert not data["out"].exists()


# -- item 6: nothing to evaluate is said, with why -----------------------------------------------

def test_nothing_to_evaluate_is_an_error_with_the_reason(tmp_path, data):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    unknown = jsonl(tmp_path / "u.jsonl", [{"instance_id": "zz", "model_patch": ""}])
    cases = [
        (["eval", "-d", str(empty), "-p", "gold"], "the dataset holds no tasks"),
        (["eval", "-d", str(listed), "-p", "gold"], "the dataset holds no tasks"),
        (["eval", "-d", str(data["dataset"]), "-p", str(empty)], "it holds no predictions"),
        (["eval", "-d", str(data["dataset"]), "-p", str(unknown)], "names an instance of the dataset"),
        (["eval", "-d", str(data["dataset"]), "-p", "gold", "--instance-ids", "nope"], "none of the ids"),
    ]
    for args, why in cases:
        result = cli(*args, "-o", str(data["out"]))
        assert result.exit_code == 2, (args, result.output)
        assert "nothing to evaluate" in result.output and why in result.output, result.output
    assert not data["out"].exists()


# -- item 9: no Docker engine is said once, up front ---------------------------------------------

def test_docker_backend_without_an_engine_stops_before_any_instance(data, tmp_path):
    result = cli(*eval_args(data, "--backend", "docker"), env={"DOCKER_HOST": f"unix://{tmp_path}/no.sock"})
    assert result.exit_code == 2, result.output
    assert result.output.count("no Docker engine") == 1
    assert not data["out"].exists()


# -- item 10: report on something that is not a run ----------------------------------------------

def test_report_on_a_dataset_says_it_is_not_a_run_summary(tmp_path):
    path = jsonl(tmp_path / "d.jsonl", [ROW, {**ROW, "instance_id": "o__r-2"}])
    result = cli("report", str(path))
    assert result.exit_code == 2
    assert "not a run summary" in result.output and "re-run the evaluation" not in result.output


def test_option_errors_have_no_input_prefix():
    result = cli("report", "nowhere.json", "--format", "yaml")
    assert result.exit_code == 2 and "option --format" in result.output and "<input>" not in result.output


# -- items 12, 13: one vocabulary, and --version ------------------------------------------------

def test_version_flag_and_verb():
    from issuebench import __version__

    for args in (["--version"], ["version"]):
        result = cli(*args)
        assert result.exit_code == 0 and __version__ in result.output


@pytest.mark.parametrize("verb", [["eval"], ["validate"], ["audit"], ["perturb"], ["envs", "build"],
                                  ["envs", "du"], ["envs", "prune"], ["compare"], ["contamination"]])
def test_help_shows_no_bool_labels_and_every_option_has_help(verb):
    import typer.main

    result = cli(*verb, "--help", env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "<bool>" not in result.output
    command = typer.main.get_command(app)
    for name in verb:
        command = command.commands[name]  # type: ignore[attr-defined]
    for param in command.params:
        if param.param_type_name == "option":  # typer's own click: isinstance(click.Option) never holds
            assert param.help, f"{' '.join(verb)} {param.opts[0]} has no help"
    names = {opt for p in command.params for opt in p.opts}
    # One name for each idea across verbs (--repos stays as a second spelling of --repos-dir).
    assert "--repos" not in names or "--repos-dir" in names


def test_the_demo_says_how_to_run_issuebench_when_it_is_not_on_path(tmp_path, monkeypatch):
    from issuebench.cli.demo_cmd import how_to_run

    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "issuebench"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    assert how_to_run(str(script), path="/nonexistent") == ".venv/bin/issuebench"
    assert how_to_run(str(script), path=str(bin_dir)) == "issuebench"  # activated: on PATH
    makefile = (Path(__file__).parents[2] / "Makefile").read_text()
    demo_recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "activate" in demo_recipe and "$(BIN)/issuebench --help" in demo_recipe
    assert "pip install --quiet -e" not in makefile  # the long install shows its progress


def test_any_command_stopped_by_ctrl_c_exits_130_with_one_line():
    """demo and the other verbs that run instances: the driver's interrupt, never a traceback."""
    import typer

    from issuebench.cli.common import friendly_errors
    from issuebench.harness.run import RunInterrupted

    little = typer.Typer()

    @little.command()
    @friendly_errors
    def run() -> None:
        raise RunInterrupted(kept=3, discarded=1, at=0.0)

    @little.command()
    @friendly_errors
    def other() -> None:
        raise KeyboardInterrupt

    result = CliRunner().invoke(little, ["run"])
    assert result.exit_code == 130 and "interrupted; rerun to resume (3 finished" in result.output
    assert CliRunner().invoke(little, ["other"]).exit_code == 130
