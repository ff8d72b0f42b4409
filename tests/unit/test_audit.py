"""Lite rules one by one, the Verified-style checks, characteristics and the dynamic check."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from issuebench.analysis.audit import (
    apply_lite_rules,
    dynamic_check,
    quality_findings,
    rule_statement_references,
)
from issuebench.analysis.audit_report import audit_tasks
from issuebench.analysis.characteristics import (
    characterize,
    count_code_blocks,
    count_error_messages,
    longest_common_substring,
)
from issuebench.analysis.runs import InstanceResult, RunResults
from issuebench.cli.main import app
from issuebench.models import InstanceReport, InstanceStatus, ListResult, Prediction, Task, TestsStatus

WORDS = " ".join(["word"] * 45)


def diff(path: str, hunks: list[list[str]], *, new: bool = False, deleted: bool = False) -> str:
    head = [f"diff --git a/{path} b/{path}"]
    if new:
        head += ["new file mode 100644", "--- /dev/null", f"+++ b/{path}"]
    elif deleted:
        head += ["deleted file mode 100644", f"--- a/{path}", "+++ /dev/null"]
    else:
        head += [f"--- a/{path}", f"+++ b/{path}"]
    body = []
    for n, lines in enumerate(hunks):
        old = sum(1 for line in lines if line[0] in " -")
        new_n = sum(1 for line in lines if line[0] in " +")
        body.append(f"@@ -{10 * n + 1},{old} +{10 * n + 1},{new_n} @@ def area(x):")
        body += lines
    return "\n".join(head + body) + "\n"


GOLD = diff("pkg/geometry.py", [[" def area(x):", "-    return x", "+    return x * x"]])
TESTS = diff("tests/test_geometry.py", [[" import pkg", "+def test_area():", "+    assert area(3) == 9"]])


def task(iid: str, **kw) -> Task:
    fields = {"instance_id": iid, "repo": "o/r", "base_commit": "a" * 40, "patch": GOLD, "test_patch": TESTS,
              "problem_statement": f"`area` returns the wrong value. {WORDS}", "FAIL_TO_PASS": ["t::test_area"],
              "PASS_TO_PASS": ["t::test_other"]}
    fields.update(kw)
    return Task(**fields)


def test_each_lite_rule_drops_only_its_rows():
    tasks = [
        task("ok-1"),
        task("img-1", problem_statement=f"See ![shot](x.png) {WORDS}"),
        task("link-1", problem_statement=f"See https://example.org/x {WORDS}"),
        task("ownlink-1", problem_statement=f"See https://github.com/o/r/blob/main/a.py {WORDS}"),
        task("sha-1", problem_statement=f"Since {'ab12' * 10} it fails. {WORDS}"),
        task("ref-1", problem_statement=f"Same as #123, still broken. {WORDS}"),
        task("short-1", problem_statement="area is wrong"),
        task("files-1", patch=GOLD + diff("pkg/other.py", [[" x", "-y", "+z"]])),
        task("hunks-1", patch=diff("pkg/geometry.py", [[" a", "-b", "+c"]] * 4)),
        task("new-1", patch=diff("pkg/new.py", [["+x = 1"]], new=True)),
        task("msg-1", test_patch=diff("tests/t.py", [[" x", "+    with pytest.raises(ValueError, match='bad'):"]])),
        task("warn-1", test_patch=diff("tests/t.py", [[" x", "+    with self.assertWarnsMessage(W, msg):"]])),
    ]
    outcomes, kept = apply_lite_rules(tasks)
    dropped = {o.rule: sorted(o.dropped) for o in outcomes}
    assert dropped == {
        "statement_references": ["img-1", "link-1", "ref-1", "sha-1"],
        "min_words": ["short-1"],
        "one_file": ["files-1"],
        "max_hunks": ["hunks-1"],
        "no_created_or_removed_files": ["new-1"],
        "no_error_message_checks": ["msg-1"],
    }
    assert {o.rule: o.kept for o in outcomes}["statement_references"] == len(tasks) - 4
    assert sorted(kept) == ["ok-1", "ownlink-1", "warn-1"]


def test_statement_reference_details():
    assert "commit hash" in rule_statement_references(task("c", problem_statement=f"at commit 3546ac7 {WORDS}"))
    # A '#1' inside code is not a reference; a hex colour is not a commit.
    code = f"```\nx = [1]  #1 first\n```\ncolor #fff {WORDS}"
    assert rule_statement_references(task("c", problem_statement=code)) is None


def test_too_narrow_flags_names_the_fix_introduces_and_the_issue_never_names():
    gold = diff("pkg/geometry.py", [[" def area(x):", "+def _square(x):", "+    return x * x"]])
    tests = diff("tests/t.py", [[" import pkg", "+from pkg.geometry import _square", "+    assert _square(2) == 4"]])
    q = quality_findings(task("n", patch=gold, test_patch=tests))
    assert q.too_narrow and q.narrow_introduced == ["_square"]
    named = quality_findings(task("m", patch=gold, test_patch=tests,
                                  problem_statement=f"please add `_square` helper {WORDS}"))
    assert not named.too_narrow


def test_too_wide_and_underspecified():
    q = quality_findings(task("w", FAIL_TO_PASS=["t::test_area", "t::test_unicode_banner", "t::test_locale_sort"]))
    assert q.too_wide and len(q.unrelated_f2p) == 2
    assert not quality_findings(task("w2")).too_wide
    vague = quality_findings(task("v", problem_statement="Maybe we should perhaps consider changing things, "
                                                          "not sure. Any thoughts?"))
    assert vague.underspecified_score == 3
    clear = task("c", problem_statement=f"`area(3)` returns 3, expected 9. {WORDS} {WORDS}")
    assert quality_findings(clear).underspecified_score == 0


def test_characteristics_of_a_statement_and_fix():
    statement = ("In pkg/geometry.py `area` fails:\n```\n>>> area(3)\n```\n"
                 "```\nTraceback (most recent call last):\nValueError: bad\n```\n"
                 "I think it should be    return x * x\n")
    ch = characterize(task("c", problem_statement=statement))
    assert (ch.code_blocks, ch.files_mentioned, ch.files_edited, ch.hunks, ch.lines_edited) == (2, 1, 1, 1, 2)
    assert ch.error_messages == 2
    assert ch.longest_overlap == len("    return x * x")
    assert ch.lines_in_common == 1
    assert (ch.fail_to_pass, ch.pass_to_pass) == (1, 1)
    assert count_code_blocks("```\nunclosed") == 1
    assert count_error_messages("E   TypeError: x\ndjango.core.exceptions.FieldError: y") == 2


def test_longest_common_substring():
    assert longest_common_substring("xabcdey", "zzbcdezz") == 4
    assert longest_common_substring("aaaa", "aa") == 2
    assert longest_common_substring("", "abc") == 0
    assert longest_common_substring("abab", "baba") == 3


def test_correlations_with_a_run():
    tasks = [task(f"t-{i}", problem_statement=("word " * (40 + 10 * i))) for i in range(8)]
    run = RunResults(name="sys", source=None, instances={  # type: ignore[arg-type]
        f"t-{i}": InstanceResult(f"t-{i}", "resolved" if i < 4 else "unresolved", resolved=i < 4) for i in range(8)})
    report = audit_tasks(tasks, run=run)
    words = next(c for c in report.correlations if c.name == "words")
    assert words.rho == pytest.approx(-(32 / 42) ** 0.5)  # ranks 1..8 against tied ranks 6.5 / 2.5
    assert words.p_value < 0.01
    files = next(c for c in report.correlations if c.name == "files_edited")
    assert files.rho is None  # constant column


def test_dynamic_check_lists_valid_fixes_the_tests_reject():
    tasks = [task("a-1"), task("a-2"), task("a-3")]
    alts = [Prediction(instance_id="a-1", model_name_or_path="alt", model_patch=GOLD),
            Prediction(instance_id="a-2", model_name_or_path="alt", model_patch=GOLD),
            Prediction(instance_id="a-3", model_name_or_path="alt", model_patch=""),
            Prediction(instance_id="zz", model_name_or_path="alt", model_patch=GOLD)]
    seen = []

    def fake_eval(ts, ps):
        seen.extend(p.instance_id for p in ps)
        return [
            InstanceReport(instance_id="a-1", model_name_or_path="alt", status=InstanceStatus.RESOLVED, resolved=True),
            InstanceReport(instance_id="a-2", model_name_or_path="alt", status=InstanceStatus.UNRESOLVED,
                           tests_status=TestsStatus(FAIL_TO_PASS=ListResult(failure=["t::test_area"]))),
        ]

    rejected = dynamic_check(tasks, alts, fake_eval)
    assert seen == ["a-1", "a-2"]  # empty and unknown alternatives are never run
    assert [(r.instance_id, r.status, r.failing_tests) for r in rejected] == [("a-2", "unresolved", ["t::test_area"])]


def test_cli_audit_json_is_one_document(tmp_path):
    path = tmp_path / "tasks.jsonl"
    rows = [task("ok-1").model_dump(mode="json"), task("short-1", problem_statement="too short").model_dump(mode="json")]
    for r in rows:
        r["FAIL_TO_PASS"] = json.dumps(r["FAIL_TO_PASS"])  # hub style: JSON-encoded lists
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    res = CliRunner().invoke(app, ["audit", str(path), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    rules = {r["rule"]: r for r in doc["lite_rules"]}
    assert rules["min_words"]["kept"] == 1 and rules["min_words"]["dropped"] == ["short-1"]
    assert [r["instance_id"] for r in doc["rows"]] == ["ok-1", "short-1"]
    assert doc["rows"][0]["files_edited"] == 1 and "too_narrow" in doc["rows"][0]
