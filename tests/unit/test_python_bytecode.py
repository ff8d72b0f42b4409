"""Which modules a run's __pycache__ names for compiling into the pristine checkout, and where the
compiled files may go (envs.python_bytecode)."""

from __future__ import annotations

import os
from pathlib import Path

from issuebench.envs import python_bytecode
from issuebench.envs.python_bytecode import cache_tag, compiled_modules

TAG = "cpython-311"


def _tree(root: Path, files: list[str]) -> None:
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")


def test_only_plain_bytecode_of_regular_pristine_sources_is_named(tmp_path: Path) -> None:
    ws, pristine, outside = tmp_path / "ws", tmp_path / "pristine", tmp_path / "outside"
    _tree(pristine, ["pkg/__init__.py", "pkg/core.py", "pkg/done.py", "pkg/__pycache__/done.cpython-311.pyc",
                     "tests/test_core.py"])
    _tree(outside, ["secret.py"])
    os.symlink(outside / "secret.py", pristine / "pkg" / "linked.py")
    _tree(ws, [f"pkg/__pycache__/{name}" for name in (
        "__init__.cpython-311.pyc", "core.cpython-311.pyc",
        "done.cpython-311.pyc",                 # the pristine checkout has it already
        "linked.cpython-311.pyc",               # its source is a link out of the checkout
        "gone.cpython-311.pyc",                 # no such source (a file the patch added)
        "core.cpython-311.opt-1.pyc", "core.cpython-310.pyc")])
    _tree(ws, ["tests/__pycache__/test_core.cpython-311-pytest-8.0.0.pyc", ".git/__pycache__/core.cpython-311.pyc"])
    assert compiled_modules(ws, pristine, TAG) == ["pkg/__init__.py", "pkg/core.py"]


def test_a_run_naming_more_modules_than_any_imports_gets_none(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(python_bytecode, "MAX_MODULES", 3)
    names = [f"m{i}.py" for i in range(5)]
    _tree(tmp_path / "pristine", names)
    _tree(tmp_path / "ws", [f"__pycache__/m{i}.{TAG}.pyc" for i in range(5)])
    assert compiled_modules(tmp_path / "ws", tmp_path / "pristine", TAG) == []


def test_hash_checked_bytecode_needs_python_3_7() -> None:
    assert cache_tag("3.9.18") == "cpython-39"
    assert cache_tag("3.12.1") == "cpython-312"
    assert cache_tag("3.6.15") is None
    assert cache_tag("2.7.18") is None
    assert cache_tag("") is None


def test_a_pycache_link_of_the_checkout_is_not_written_through(tmp_path: Path) -> None:
    pristine, elsewhere = tmp_path / "pristine", tmp_path / "elsewhere"
    _tree(pristine, ["pkg/core.py"])
    elsewhere.mkdir()
    os.symlink(elsewhere, pristine / "pkg" / "__pycache__")
    compiled = tmp_path / "0.pyc"
    compiled.write_bytes(b"pyc")
    assert not python_bytecode._place(compiled, pristine, "pkg/core.py", TAG)
    assert list(elsewhere.iterdir()) == []
