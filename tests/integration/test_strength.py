"""Wider tests and test strength on a small real repository: real git, environments and sandbox.

The project has one module with two functions, `pages` (the bug) and `chunks` (untouched by the
fix), and tests for both. Two tasks share the gold fix of `pages`: one whose tests pin it down at
two points (strong), one that checks a single value (weak, so a wrong fix passes).
"""

from __future__ import annotations

import json

import pytest

from issuebench.analysis.formats import render
from issuebench.analysis.report import report_from_paths
from issuebench.harness import EvalOptions, build_context, run_evaluation
from issuebench.models import EnvSpec, InstanceStatus, Prediction, Task
from issuebench.strength.post import after_eval
from issuebench.strength.test_strength import measure_tasks
from tests.gitrepo import diff_between, git, init_repo

pytestmark = pytest.mark.xdist_group("demo-eval")

OPS = '''"""Paging helpers."""


def pages(n, per_page):
    """How many pages hold n items."""
    return n // per_page{fix}


def chunks(items, size):
    """items cut into lists of at most size."""
    return [items[i:i + size] for i in range(0, len(items), size)]
'''
BUGGY = OPS.format(fix="")
TESTS = '''import unittest

from paging.ops import chunks, pages


class PagesTest(unittest.TestCase):
    def test_exact(self):
        self.assertEqual(pages(9, 3), 3)
{extra}

class ChunksTest(unittest.TestCase):
    def test_chunks(self):
        self.assertEqual(chunks([1, 2, 3], 2), [[1, 2], [3]])
'''
STRONG = '''
    def test_partial_page(self):
        self.assertEqual(pages(10, 3), 4)
        self.assertEqual(pages(9, 3), 3)
'''
WEAK = '''
    def test_partial_page(self):
        self.assertEqual(pages(10, 3), 4)
'''
SPEC = EnvSpec(python="3.11", seed_pip=False, test_cmd="python -m unittest -v", log_parser="unittest",
               env_vars={"PYTHONPATH": "src"}, exclude_newer_source="none")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """(repos dir, base commit, gold patch, test patches {strong, weak}, a patch that breaks chunks)."""
    root = tmp_path_factory.mktemp("repos")
    repo = root / "demo__paging"
    base = init_repo(repo, {"src/paging/__init__.py": "", "src/paging/ops.py": BUGGY,
                            "tests/__init__.py": "", "tests/test_ops.py": TESTS.format(extra="")})
    fixed = OPS.format(fix=" + (1 if n % per_page else 0)")
    git(repo, "checkout", "-q", "-b", "fix")
    (repo / "src/paging/ops.py").write_text(fixed)
    git(repo, "commit", "-qam", "fix")
    gold = diff_between(repo, base, "HEAD")
    # Fixes pages like gold, and breaks chunks, which no graded list mentions.
    (repo / "src/paging/ops.py").write_text(fixed + "\n\nchunks = lambda items, size: [items]\n")
    breaker = git(repo, "diff", base, "--", "src") + "\n"
    git(repo, "checkout", "-q", "--", "src")
    patches = {}
    for name, extra in (("strong", STRONG), ("weak", WEAK)):
        (repo / "tests/test_ops.py").write_text(TESTS.format(extra=extra))
        patches[name] = git(repo, "diff") + "\n"
        git(repo, "checkout", "-q", "--", "tests/test_ops.py")
    git(repo, "checkout", "-q", "main")
    return root, base, gold, patches, breaker


def task(project, kind: str, pass_to_pass: list[str] | None = None) -> Task:
    _, base, gold, patches, _ = project
    return Task(instance_id=f"demo__paging-{kind}", repo="demo/paging", base_commit=base, patch=gold,
                test_patch=patches[kind], FAIL_TO_PASS=["tests.test_ops.PagesTest.test_partial_page"],
                PASS_TO_PASS=pass_to_pass if pass_to_pass is not None else ["tests.test_ops.PagesTest.test_exact"],
                env=SPEC)


def ctx(project, tmp_path, run_id="r"):
    return build_context(EvalOptions(output_dir=tmp_path, run_id=run_id, repos_dir=project[0], timeout=120,
                                     python_fallback="nearest"))


def test_a_resolved_patch_that_breaks_an_ungraded_test_is_named(project, tmp_path):
    t = task(project, "strong")
    wrong = project[4]
    preds = [Prediction(instance_id=t.instance_id, model_name_or_path="breaker", model_patch=wrong),
             Prediction(instance_id=t.instance_id, model_name_or_path="clean", model_patch=project[2])]
    c = ctx(project, tmp_path)
    result = run_evaluation([t], preds, c, workers=1)
    assert {r.status for r in result.reports} == {InstanceStatus.RESOLVED}  # the official verdict stays
    found = after_eval(result, [t], preds, c, "modules")
    breaker, clean = found["breaker"][1][0], found["clean"][1][0]
    assert breaker.status == "checked" and breaker.breaks == ["tests.test_ops.ChunksTest.test_chunks"]
    assert clean.status == "checked" and clean.breaks == [] and clean.compared >= 1
    # The summary keeps the official count and adds the stricter one; report and HTML show both.
    summary = json.loads((tmp_path / "breaker.r.json").read_text())
    assert summary["resolved_instances"] == 1 and summary["wider_tests"]["strict_resolved_instances"] == 0
    report = report_from_paths([tmp_path / "breaker.r.json", tmp_path / "clean.r.json"])
    by_name = {s.name: s for s in report.systems}
    assert (by_name["breaker"].resolved, by_name["breaker"].strict_resolved) == (1, 0)
    assert (by_name["clean"].resolved, by_name["clean"].strict_resolved) == (1, 1)
    page = render(report, "html")
    assert "Resolved without breaking wider tests" in page and "ChunksTest.test_chunks" in page


def test_weak_tests_let_a_mutant_survive_and_strong_ones_do_not(project, tmp_path):
    tasks = [task(project, "strong"), task(project, "weak", pass_to_pass=[])]
    results = {r.instance_id: r for r in measure_tasks(tasks, ctx(project, tmp_path), limit=20)}
    strong, weak = results["demo__paging-strong"], results["demo__paging-weak"]
    assert strong.status == weak.status == "measured", (strong.reason, weak.reason)
    assert strong.strength == 1.0, [m.description for m in strong.survivors]
    assert weak.strength is not None and weak.strength < 1.0
    survivor = weak.survivors[0]
    assert survivor.line == 6 and "ops.py" in survivor.patch


def test_audit_test_strength_from_the_command_line(tmp_path):
    from typer.testing import CliRunner

    from issuebench.cli.main import app
    from issuebench.demo import demo_tasks

    one = next(t for t in demo_tasks() if t.instance_id == "issuebench-demo__spans-3")
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(one.model_dump_json() + "\n")
    result = CliRunner().invoke(app, ["audit", str(dataset), "--test-strength", "--mutants", "2", "-f", "json",
                                      "--output-dir", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)  # progress lines go to stderr
    assert doc["distribution"]["measured"] == 1 and doc["tasks"][0]["instance_id"] == one.instance_id
    assert len(doc["tasks"][0]["mutants"]) == 2


@pytest.mark.network
def test_covering_finds_the_broken_test_through_coverage_contexts_of_the_candidates_lines(project, tmp_path):
    t = task(project, "strong").model_copy(update={"env": SPEC.model_copy(update={"packages": ["coverage"]})})
    preds = [Prediction(instance_id=t.instance_id, model_name_or_path="breaker", model_patch=project[4])]
    c = ctx(project, tmp_path)
    result = run_evaluation([t], preds, c, workers=1)
    if result.reports[0].status is InstanceStatus.ENV_FAILED:
        pytest.skip(f"coverage.py could not be installed: {result.reports[0].reason[:200]}")
    found = after_eval(result, [t], preds, c, "covering")["breaker"][1][0]
    # chunks' tests are named only by the candidate's run: its new lines do not exist in gold's tree.
    assert found.status == "checked" and found.breaks == ["tests.test_ops.ChunksTest.test_chunks"], found
    assert not any("fell back" in n for n in found.notes)
