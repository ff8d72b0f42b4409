"""synth generators on small sources: each bug is a minimal edit that still parses and changes the AST."""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

import pytest

from issuebench.synth.base import Candidate, Change, SynthContext
from issuebench.synth.generators import PROCEDURAL, REGISTRY, get_generators, mutate_range
from issuebench.synth.generators.combine import Combine
from issuebench.synth.generators.model_rewrite import ModelRewrite
from issuebench.synth.generators.pr_mirror import PRMirror
from issuebench.synth.source import SourceIndex, apply_edits, functions
from tests.gitrepo import commit_files, init_repo

SOURCE = '''"""A module."""
import contextlib


def clamp(x, lo, hi):
    """Clamp x into [lo, hi]."""
    # keep this comment
    if x < lo:
        return lo
    if not x <= hi:
        return hi
    return x


class Bag:
    def total(self, items, scale=1):
        out = 0
        for item in items:
            out += item * scale
        with contextlib.suppress(TypeError):
            out = out - len(items)
        flag = True and bool(items)
        print("done", out)
        return sorted(items)[0] if flag else max(out, 0)
'''


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


@pytest.mark.parametrize("cls", PROCEDURAL, ids=lambda c: c.name)
def test_each_procedural_generator_makes_small_parsable_bugs(cls):
    fns = functions("pkg/mod.py", SOURCE)
    cands = [c for fn in fns for c in cls().mutate_function(fn)]
    assert cands, f"{cls.name} found no site"
    for cand in cands:
        after = cand.changes[0].after
        assert cand.problem() is None, (cls.name, cand.description)
        assert ast.dump(ast.parse(after)) != ast.dump(ast.parse(SOURCE))
        assert "# keep this comment" in after  # text edits, never a re-print of the function
        assert len(changed_lines(SOURCE, after)) <= 14, cand.description


def test_operator_flip_changes_only_the_operator():
    fn = next(f for f in functions("m.py", SOURCE) if f.qualname == "clamp")
    flips = list(REGISTRY["op_flip"]().mutate_function(fn))
    assert changed_lines(SOURCE, flips[0].changes[0].after) == ["-    if x < lo:", "+    if x <= lo:"]
    assert fn.qualname == "clamp" and fn.body_lines[0] == 8  # the body starts after the docstring


def test_functions_have_qualified_names_and_ranges():
    names = {f.qualname: f.lines for f in functions("m.py", SOURCE)}
    assert names == {"clamp": (5, 12), "Bag.total": (16, 24)}


def test_mutate_range_only_touches_functions_in_the_range():
    cands = mutate_range("m.py", SOURCE, 18, 19)  # inside Bag.total
    assert cands and {c.functions[0][1] for c in cands} == {"Bag.total"}
    assert all(c.problem() is None for c in cands)
    assert {c.generator for c in cands} >= {"op_flip", "remove_loop", "swap_args"}


def test_syntax_errors_and_no_ops_are_recognised():
    same = Candidate("x", [Change("m.py", "a = 1\n", "a = (1)\n")], [("m.py", "f", 1, 1)])
    broken = Candidate("x", [Change("m.py", "a = 1\n", "a = \n")], [("m.py", "f", 1, 1)])
    assert same.problem() == "equivalent" and broken.problem() == "syntax"
    with pytest.raises(ValueError):
        from issuebench.synth.source import Edit

        apply_edits("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])


def test_spans_count_utf8_columns():
    src = "s = 'é' + x\n"
    node = ast.parse(src).body[0].value.right
    assert SourceIndex(src).text(node) == "x"


def test_combinations_join_kept_bugs_of_different_functions():
    fns = functions("m.py", SOURCE)
    singles = [next(REGISTRY["op_flip"]().mutate_function(fn)) for fn in fns]
    ctx = SynthContext(root=Path("."), commit="c", files={"m.py": SOURCE}, kept=singles)
    combos = list(Combine().candidates(ctx))
    assert combos and all(len(c.parts) == 2 for c in combos)
    after = combos[0].changes[0].after
    assert "x <= lo" in after and len(changed_lines(SOURCE, after)) == 4


def test_pr_mirror_undoes_a_past_change_that_is_still_in_place(tmp_path):
    repo = tmp_path / "r"
    init_repo(repo, {"pkg/m.py": "def f(x):\n    return x\n\n\ndef g(y):\n    return y\n"})
    commit_files(repo, {"pkg/m.py": "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y\n"}, "fix f")
    head = commit_files(repo, {"pkg/m.py": "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return -y\n"},
                        "change g")
    today = (repo / "pkg/m.py").read_text()
    ctx = SynthContext(root=repo, commit=head, files={"pkg/m.py": today}, git_dir=repo)
    cands = list(PRMirror().candidates(ctx))
    assert sorted(c.description.split(" in ")[1] for c in cands) == ["f", "g"]
    f_bug = next(c for c in cands if c.functions[0][1] == "f").changes[0].after
    assert "return x\n" in f_bug and "return -y" in f_bug


class FakeClient:
    def __init__(self, text):
        self.text, self.calls = text, []

    def query(self, messages):
        self.calls.append(messages)
        return self.text


def test_model_rewrite_asks_with_the_signature_only_and_splices_the_answer():
    client = FakeClient("Sure:\n```python\ndef clamp(x, lo, hi):\n    return min(x, hi)\n```\n")
    ctx = SynthContext(root=Path("."), commit="c", files={"m.py": SOURCE}, client=client,
                       options={"model_max": 5}, covered={("m.py", "clamp")})
    cands = list(ModelRewrite().candidates(ctx))
    assert len(cands) == 1 and len(client.calls) == 1
    prompt = client.calls[0][1]["content"]
    assert "Clamp x into" in prompt and "return lo" not in prompt
    after = cands[0].changes[0].after
    assert "return min(x, hi)" in after and "class Bag" in after and cands[0].problem() is None


def test_unknown_generator_names_are_refused():
    with pytest.raises(KeyError):
        get_generators(["op_flip", "nope"])
