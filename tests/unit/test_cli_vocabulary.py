"""One vocabulary across verbs: every verb's options, read from the command tree the typer app builds.

A new inconsistency fails here: an idea two verbs share spelled two ways, one name meaning two
things, a default or a meaning that differs between verbs, an older spelling that is not written
down in the vocabulary (issuebench.cli.options).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from issuebench.cli.main import app
from issuebench.cli.options import VOCABULARY

# Older spellings still accepted where a verb had them, so command lines written for it keep
# working. Each is an alias in the vocabulary; adding one here is a decision, not a shortcut.
LEGACY = {"--repos-dir", "--no-cache", "--rebuild", "--no-memory", "--timeout", "--time-limit", "--max",
          "--repo", "--threshold", "--model", "--version"}

# A verb's own option whose name holds one of these words names an idea the vocabulary has: it
# belongs there, with its meaning written down once (a new `--repo-dir` or `--no-cache` fails).
WATCHED = ("timeout", "time-limit", "repos", "resume", "cache", "rebuild", "worker", "instance", "model",
           "recipe", "sandbox", "offline", "base-url", "split", "dataset", "prediction", "fallback")


def verbs() -> dict[str, list]:
    """'eval', 'envs build', ... (and '' for the top level) -> its options."""
    found: dict[str, list] = {}

    def walk(command, path: list[str]) -> None:
        found[" ".join(path)] = [p for p in command.params if p.param_type_name == "option"]
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def canonical(param) -> str:
    return next(o for o in param.opts if o.startswith("--"))


def test_the_walk_sees_every_verb():
    names = set(verbs())
    assert {"eval", "validate", "collect", "synth", "setup", "infer", "agent", "regrade", "audit", "report",
            "envs build", "repo from-pypi", "agent show"} <= names
    assert all(verbs()[v] for v in ("eval", "validate", "synth"))  # options are read, not missed


def test_an_option_two_verbs_share_is_defined_once():
    users: dict[str, set[str]] = {}
    for verb, params in verbs().items():
        for p in params:
            users.setdefault(canonical(p), set()).add(verb)
    shared = {name: sorted(v) for name, v in users.items() if len(v) > 1 and name not in VOCABULARY}
    assert shared == {}, "options on several verbs belong in issuebench.cli.options.VOCABULARY"


def test_a_shared_name_has_one_meaning_one_default_and_declared_spellings():
    wrong = []
    for verb, params in verbs().items():
        for p in params:
            concept = VOCABULARY.get(canonical(p))
            if concept is None:
                continue
            where = f"{verb} {concept.name}"
            if p.opts[0] != concept.name:
                wrong.append(f"{where}: spelled first as {p.opts[0]}")
            if concept.meaning not in (p.help or ""):
                wrong.append(f"{where}: help does not say the shared meaning")
            if not concept.per_verb_default and p.default != concept.default:
                wrong.append(f"{where}: default {p.default!r}, elsewhere {concept.default!r}")
            others = set(p.opts + p.secondary_opts) - {concept.name}
            undeclared = others - set(concept.aliases) - ({concept.short} if concept.short else set())
            if undeclared:
                wrong.append(f"{where}: spelled also {sorted(undeclared)}, which the vocabulary does not declare")
            if concept.short and concept.short not in p.opts:
                wrong.append(f"{where}: lacks its short flag {concept.short}")
    assert wrong == []


def test_a_spelling_means_one_thing():
    owners: dict[str, set[str]] = {}   # spelling -> the canonical names it stands for
    aliases: set[tuple[str, str]] = set()
    for params in verbs().values():
        for p in params:
            name = canonical(p)
            for spelling in p.opts + p.secondary_opts:
                owners.setdefault(spelling, set()).add(name)
                if spelling != name and spelling.startswith("--"):
                    aliases.add((spelling, name))
    ambiguous = {s: sorted(names) for s, names in owners.items() if len(names) > 1}
    # Two meanings for one spelling only where older command lines need it: every meaning but
    # at most one holds it as a declared older spelling.
    for spelling, names in ambiguous.items():
        assert spelling in LEGACY, (spelling, names)
        assert sum((spelling, n) not in aliases for n in names) <= 1, (spelling, names)
    assert {s for s, _ in aliases} <= LEGACY, "a new older spelling: add it to the vocabulary and LEGACY"
    # Short flags: one meaning each, wherever they appear.
    shorts = {s: sorted(n) for s, n in owners.items() if not s.startswith("--") and len(n) > 1}
    assert shorts == {}


def test_a_verbs_own_option_does_not_name_a_shared_idea():
    local = sorted({f"{verb} {canonical(p)}" for verb, params in verbs().items() for p in params
                    if canonical(p) not in VOCABULARY and any(w in canonical(p) for w in WATCHED)})
    assert local == []


def test_workers_default_to_the_cores_on_every_verb():
    defaults = {verb: (p.default, p.help) for verb, params in verbs().items() for p in params
                if canonical(p) == "--workers"}
    assert {"eval", "validate", "synth", "infer", "agent", "envs build", "audit", "demo"} <= set(defaults)
    assert all(d is None and "(default: the number of cores)" in h for d, h in defaults.values()), defaults


@pytest.mark.parametrize("verb", ["validate", "synth", "regrade", "audit", "eval", "infer", "agent", "envs build"])
def test_instance_ids_on_every_verb_that_picks_tasks(verb):
    [param] = [p for p in verbs()[verb] if canonical(p) == "--instance-ids"]
    assert "-i" in param.opts


# -- the older spellings are the same options, by what the verb does with them ----------------------

def cli(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.mark.parametrize(("old", "new"), [("--timeout", "--test-timeout"), ("--repos-dir", "--repos")])
def test_an_older_spelling_is_said_by_the_new_name(tmp_path, old, new):
    row = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "patch": "", "test_patch": "",
           "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["t2"]}
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(row) + "\n")
    value = "0" if old == "--timeout" else str(tmp_path / "missing")
    for verb in (["validate", str(data)], ["eval", "-d", str(data), "-p", "gold"]):
        for spelling in (old, new):
            result = cli(*verb, spelling, value, "-o", str(tmp_path / "out"))
            assert result.exit_code == 2 and f"option {new}:" in result.output, (verb, spelling, result.output)
    assert not Path(tmp_path / "out").exists()


def test_regrade_model_name_keeps_its_older_spelling(tmp_path):
    row = {"instance_id": "o__r-1", "repo": "o/r", "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["t2"]}
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(row) + "\n")
    (tmp_path / "logs" / "o__r-1").mkdir(parents=True)
    (tmp_path / "logs" / "o__r-1" / "test_output.txt").write_text("PASSED t1\nPASSED t2\n")
    for spelling in ("--model-name", "--model"):
        out = tmp_path / spelling.strip("-")
        result = cli("regrade", "--logs", str(tmp_path / "logs"), "-d", str(data), "--parser", "pytest",
                     spelling, "mine", "-o", str(out))
        assert result.exit_code == 0, result.output
        assert list(out.glob("mine.*.json")), result.output


# -- --instance-ids where it was missing: validate, regrade, audit (synth: tests/integration) --------

ROW = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "patch": "", "test_patch": "",
       "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["t2"], "problem_statement": "add() is wrong"}


def rows(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({**ROW, "instance_id": f"o__r-{i}"}) + "\n" for i in range(1, n + 1)))
    return path


def test_validate_takes_only_the_instances_named(tmp_path):
    data = rows(tmp_path / "cand.jsonl", 3)
    result = cli("validate", str(data), "-o", str(tmp_path / "tasks.jsonl"), "-i", "o__r-1,o__r-3")
    assert result.exit_code == 0, result.output
    judged = [json.loads(line)["instance_id"] for line in (tmp_path / "tasks.rejected.jsonl").read_text().splitlines()]
    assert sorted(judged) == ["o__r-1", "o__r-3"]  # rows without a test change, rejected without running
    none = cli("validate", str(data), "-o", str(tmp_path / "t2.jsonl"), "-i", "nope")
    assert none.exit_code == 2 and "option --instance-ids" in none.output


def test_regrade_takes_only_the_logs_named(tmp_path):
    data = rows(tmp_path / "d.jsonl", 3)
    for i in (1, 2, 3):
        (tmp_path / "logs" / f"o__r-{i}").mkdir(parents=True)
        (tmp_path / "logs" / f"o__r-{i}" / "test_output.txt").write_text("PASSED t1\nPASSED t2\n")
    result = cli("regrade", "--logs", str(tmp_path / "logs"), "-d", str(data), "--parser", "pytest",
                 "-i", "o__r-2", "-i", "o__r-3", "-v")
    assert result.exit_code == 0, result.output
    assert "regraded 2 log(s)" in result.output and "o__r-1" not in result.output


def test_audit_takes_only_the_tasks_named(tmp_path):
    data = rows(tmp_path / "d.jsonl", 3)
    result = cli("audit", str(data), "-i", "o__r-2")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("1 tasks")


def test_setup_takes_model_and_base_url_as_the_other_verbs_do(tmp_path, monkeypatch):
    from issuebench.cli.setup_cmd import endpoint_model

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert endpoint_model("my-model", "http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1#my-model"
    assert endpoint_model("http://127.0.0.1:8000/v1/my-model", None) == "http://127.0.0.1:8000/v1/my-model"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert endpoint_model("m", None) == "http://127.0.0.1:9/v1#m"
    monkeypatch.delenv("OPENAI_BASE_URL")
    result = CliRunner().invoke(app, ["setup", str(tmp_path), "--model", "my-model"], env={"OPENAI_BASE_URL": ""})
    assert result.exit_code == 2 and "option --model" in result.output and "--base-url" in result.output
