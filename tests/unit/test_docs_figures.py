"""Claims in the docs that a script or a table can check."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_no_markdown_table_is_split_by_a_blank_line():
    for doc in sorted((ROOT / "docs").glob("*.md")):
        lines = doc.read_text().splitlines()
        for i in range(1, len(lines) - 1):
            if not lines[i].strip() and lines[i - 1].startswith("|") and lines[i + 1].startswith("|"):
                assert lines[i + 1].startswith("|---") or "|---" in lines[i + 2], f"{doc.name}:{i + 1}"


def test_the_soak_section_names_as_many_attacks_as_the_script_has_and_no_others():
    soak = _module(ROOT / "benchmarks" / "soak.py")
    text = (ROOT / "docs" / "benchmarks.md").read_text().split("## Sandbox under attack", 1)[1].split("\n## ", 1)[0]
    count = re.search(r"(\d+) kinds of attack: ([^)]*)\)", text)
    assert count is not None
    assert int(count.group(1)) == len(soak.ATTACKS) == len(count.group(2).split(","))
    assert "secret" not in text or any("secret" in name for name in soak.ATTACKS)


def test_eval_overhead_times_a_first_run_that_is_not_served_from_the_cache(tmp_path, monkeypatch):
    """Round after round, the 'first' run must really evaluate (no result restored from the cache)."""
    from issuebench.demo import demo_tasks

    bench = _module(ROOT / "benchmarks" / "eval_overhead.py")
    tasks = demo_tasks()[:1]
    logs = []
    for i in range(2):
        bench.first_and_rerun(tasks, tmp_path / f"c-{i}")
        log = tmp_path / f"c-{i}" / "logs/run_evaluation/c/gold" / tasks[0].instance_id / "run_instance.log"
        logs.append(log.read_text())
    assert all("restored from the" not in text.split("reused")[0] for text in logs)
