"""infer's parts on a real git repository built here: retrieval, budget, extraction, apply check."""

from __future__ import annotations

import json

import pytest

from issuebench.infer import InferConfig, build_prompt, extract_patch, run_infer
from issuebench.infer.check import apply_check
from issuebench.infer.repo_files import is_test_path, read_files
from issuebench.infer.retrieval import BM25Retriever, OracleRetriever, Retrieved, index_dir
from issuebench.llm import ReplayModel
from issuebench.models import Task
from tests.gitrepo import diff_between, init_repo

FILES = {
    "README.md": "# shop\nA tiny shop.\n",
    "shop/cart.py": "def total(items):\n    return sum(price for price in items)\n",
    "shop/tax.py": "RATE = 0.2\n\n\ndef with_tax(amount):\n    return amount * (1 + RATE)\n",
    "shop/shipping.py": "def shipping_cost(weight):\n    return 5 if weight < 10 else 10\n",
    "tests/test_cart.py": "from shop.cart import total\n\ndef test_total():\n    assert total([1]) == 1\n",
    "docs/notes.txt": "discount coupons cart total\n",
}
FIXED_CART = "def total(items, discount=0):\n    return sum(price for price in items) - discount\n"
STATEMENT = "The cart total ignores a discount coupon: total(items) should subtract the discount."


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("infer")
    repo = root / "repos" / "acme__shop"
    base = init_repo(repo, FILES)
    from tests.gitrepo import commit_files

    fixed = commit_files(repo, {"shop/cart.py": FIXED_CART}, "fix")
    gold = diff_between(repo, base, fixed)
    task = Task(instance_id="acme__shop-1", repo="acme/shop", base_commit=base, patch=gold,
                problem_statement=STATEMENT)
    return {"root": root, "repo": repo, "repos": root / "repos", "task": task, "gold": gold}


def test_documents_are_the_non_test_python_files_at_the_commit(world) -> None:
    files = read_files(str(world["repo"]), world["task"].base_commit)
    assert sorted(files) == ["shop/cart.py", "shop/shipping.py", "shop/tax.py"]
    assert files["shop/tax.py"] == FILES["shop/tax.py"]
    assert is_test_path("pkg/tests/util.py") and is_test_path("test_x.py") and not is_test_path("pkg/testsuite.py")


def test_bm25_ranks_the_file_the_issue_is_about_first_and_caches_the_index(world) -> None:
    task = world["task"]
    hits = BM25Retriever().retrieve(task, world["repo"], 3)
    assert hits[0].path == "shop/cart.py" and hits[0].text == FILES["shop/cart.py"]
    assert (index_dir(world["repo"], task.base_commit) / "paths.json").is_file()
    assert [h.path for h in BM25Retriever().retrieve(task, world["repo"], 3)] == [h.path for h in hits]
    assert [r.path for r in OracleRetriever().retrieve(task, world["repo"], 5)] == ["shop/cart.py"]


def test_the_token_budget_keeps_files_in_rank_order_and_skips_what_does_not_fit() -> None:
    task = Task(instance_id="a-1", repo="a/b", base_commit="0" * 40, problem_statement="short issue")
    files = [Retrieved("big.py", "x = 1\n" * 4000), Retrieved("small.py", "y = 2\n"), Retrieved("mid.py", "z\n" * 50)]
    prompt = build_prompt(task, files, context_tokens=1500)
    assert prompt.files == ["small.py", "mid.py"] and prompt.dropped == ["big.py"]
    assert prompt.tokens <= 1500
    assert "[start of small.py]\n1 y = 2\n[end of small.py]" in prompt.text  # numbered lines (patch style)
    full = build_prompt(task, files, style="fullfile", context_tokens=0)
    assert full.files == ["big.py", "small.py", "mid.py"] and "[start of small.py]\ny = 2\n" in full.text


def test_a_patch_is_found_in_tags_fences_bare_text_search_replace_and_whole_files(world) -> None:
    gold, task = world["gold"], world["task"]

    def read(path):
        return FILES.get(path)

    assert extract_patch(f"Here:\n<patch>\n{gold}</patch>").method == "patch_tags"
    assert extract_patch(f"<patch>\n```diff\n{gold}```\n</patch>").patch == gold
    assert extract_patch(f"Sure.\n```diff\n{gold}```\nDone.").method == "fenced_diff"
    assert extract_patch(f"The fix:\n{gold}").method == "bare_diff"
    sr = ("shop/cart.py\n```python\n<<<<<<< SEARCH\ndef total(items):\n    return sum(price for price in items)\n"
          "=======\n" + FIXED_CART.rstrip("\n") + "\n>>>>>>> REPLACE\n```\n")
    found = extract_patch(sr, read)
    assert found.method == "search_replace"
    whole = extract_patch(f"[start of shop/cart.py]\n{FIXED_CART}[end of shop/cart.py]", read)
    assert whole.method == "full_files"
    for patch in (found.patch, whole.patch):
        check = apply_check(world["repo"], task.base_commit, patch)
        assert check.status == "applied", check.reason
        assert "+def total(items, discount=0):" in check.patch
    missing = extract_patch("a.py\n<<<<<<< SEARCH\nnot there\n=======\nx\n>>>>>>> REPLACE", lambda p: "other\n")
    assert missing.patch == "" and missing.notes == ["search text not found in a.py"]
    assert extract_patch("I could not find the bug.").method == "none"


def test_the_apply_check_repairs_hunk_counts_and_writes_the_clean_diff(world) -> None:
    task = world["task"]
    broken = world["gold"].replace("@@ -1,2 +1,2 @@", "@@ -1,7 +1,9 @@")
    assert broken != world["gold"]
    check = apply_check(world["repo"], task.base_commit, broken)
    assert check.status == "applied-after-repair"
    assert "@@ -1,2 +1,2 @@" in check.patch
    assert apply_check(world["repo"], task.base_commit, world["gold"].replace("price", "cost")).status == "does-not-apply"


def test_run_infer_writes_predictions_prompts_and_the_text_dataset(world) -> None:
    task, out = world["task"], world["root"] / "out"
    model = ReplayModel({"conversations": [{"match": "cart total ignores", "answers": [
        {"content": f"<patch>\n{world['gold']}</patch>", "prompt_tokens": 1000, "completion_tokens": 100}]}]})
    cfg = InferConfig(repos_dir=world["repos"], allow_clone=False)
    result = run_infer([task], model, out, cfg, write_text=True)
    assert result.records[0]["status"] == "predicted"
    pred = json.loads((out / "preds.jsonl").read_text())
    assert pred["model_patch"] == world["gold"] and pred["apply_check"] == "applied"
    assert pred["cost"] == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)
    prompt = json.loads((out / "prompts" / "acme__shop-1.json").read_text())
    assert prompt["files"][:2] == ["README.md", "shop/cart.py"] and STATEMENT in prompt["messages"][1]["content"]
    row = json.loads((out / "text.jsonl").read_text())
    assert row["instance_id"] == task.instance_id and row["text"].startswith("You will be provided")
    again = run_infer([task], model, out, cfg)
    assert again.skipped == [task.instance_id] and not again.records


def test_an_unknown_repository_is_no_context_not_a_prediction(tmp_path) -> None:
    task = Task(instance_id="x__y-1", repo="x/y", base_commit="0" * 40, problem_statement="p")
    result = run_infer([task], ReplayModel({"default": ["x"]}), tmp_path,
                       InferConfig(repos_dir=tmp_path, allow_clone=False))
    assert result.records[0]["status"] == "no_context" and "no local clone" in result.records[0]["reason"]
    assert not (tmp_path / "preds.jsonl").exists()
