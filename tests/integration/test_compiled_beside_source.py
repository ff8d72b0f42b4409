"""A project whose install compiles a module beside its own `.py` (Cython's pure-Python mode, as
habluetooth does): the compiled module, built once per environment, would run in place of the
source a task's patch changes. collect → validate → gold eval on a real project built with git,
a real C extension compiled by the real build, the real sandbox.

Without the defence the gold patch's fix to `calc/fast.py` never runs (the stale `.so` does):
validate keeps no task.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from issuebench.harness.overlay import OVERLAY_NAME, SOURCES_NAME, apply_overlay
from issuebench.harness.stale_compiled import (
    drop_beside_changed,
    drop_built_from_other_sources,
    python_source,
)
from issuebench.repos import tree_blobs
from issuebench.setup.pyversions import installed_minors
from tests.factory_run import run_factory
from tests.unit.test_collect_mining import Repo

# As habluetooth's poetry build script does: the extensions are named outside setup.py, so setup
# adds no in-place rebuild before the tests (which would compile the stale twin again here).
SETUP_PY = """from build_ext import build
from setuptools import setup

kwargs = {}
build(kwargs)
setup(name="acme-calc", version="1.0", packages=["calc"], **kwargs)
"""
BUILD_EXT = """from setuptools import Extension


def build(kwargs):
    kwargs["ext_modules"] = [Extension("calc.fast", ["calc/_fast.c"])]
"""
# The compiled twin of calc/fast.py as it was before the fix (what Cython would have made of it).
FAST_C = """#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a - b);
}
static PyMethodDef methods[] = {{"add", add, METH_VARARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "fast", NULL, -1, methods};
PyMODINIT_FUNC PyInit_fast(void) { return PyModule_Create(&module); }
"""
FAST_PY = "def add(a, b):\n    return a - b\n"
TESTS = "from calc.fast import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
FIX_TEST = "\n\ndef test_add():\n    assert add(2, 3) == 5\n"
DATE = "2024-06-03T12:00:00Z"


def test_python_source_of_a_compiled_module() -> None:
    assert python_source("src/calc/fast.cpython-311-x86_64-linux-gnu.so") == "src/calc/fast.py"
    assert python_source("calc/fast.abi3.so") == "calc/fast.py"
    assert python_source("calc/fast.py") is None


def test_one_stale_module_takes_every_module_compiled_from_its_own_py_with_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "calc").mkdir(parents=True)
    for name in ("fast.cpython-311-x86_64-linux-gnu.so", "same.cpython-311-x86_64-linux-gnu.so",
                 "cy.cpython-311-x86_64-linux-gnu.so", "fast.py", "same.py", "cy.pyx"):
        (ws / "calc" / name).write_text("x")
    products = [f"calc/{n}.cpython-311-x86_64-linux-gnu.so" for n in ("fast", "same", "cy")]
    here = {"calc/fast.py": "new", "calc/same.py": "s", "calc/cy.pyx": "c"}
    # Nothing differs: nothing goes.
    assert drop_built_from_other_sources(ws, products, {**here}, here) == []
    # fast.py differs: same's compiled module goes too (they reach into each other's internals);
    # a module compiled from a .pyx has no source to fall back on and stays.
    dropped = drop_built_from_other_sources(ws, products, {**here, "calc/fast.py": "old"}, here)
    assert dropped == products[:2]
    assert sorted(p.name for p in (ws / "calc").glob("*.so")) == ["cy.cpython-311-x86_64-linux-gnu.so"]


def test_a_patch_to_one_compiled_modules_source_drops_every_module_compiled_from_its_own_py(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg" / "sub").mkdir(parents=True)
    for name in ("pkg/a.cpython-312-x86_64-linux-gnu.so", "pkg/a.py", "pkg/sub/b.abi3.so", "pkg/sub/b.py",
                 "pkg/c.cpython-312-x86_64-linux-gnu.so", "pkg/c.pyx", "pkg/plain.py"):
        (ws / name).write_text("x")
    assert drop_beside_changed(ws, ["pkg/plain.py"]) == []
    assert drop_beside_changed(ws, ["pkg/a.py"]) == ["pkg/a.cpython-312-x86_64-linux-gnu.so", "pkg/sub/b.abi3.so"]
    assert (ws / "pkg" / "c.cpython-312-x86_64-linux-gnu.so").exists()


def test_a_compiled_module_reached_through_a_link_out_of_the_workspace_is_not_removed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "fast.cpython-311-x86_64-linux-gnu.so").write_text("precious")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc").symlink_to(outside)         # what a hostile patch can make
    assert drop_beside_changed(ws, ["calc/fast.py"]) == []
    assert (outside / "fast.cpython-311-x86_64-linux-gnu.so").exists()


def test_the_install_overlay_leaves_out_a_module_compiled_from_another_commits_source(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repo = Repo(ws)
    repo.commit("init", {"calc/fast.py": FAST_PY, "calc/slow.py": FAST_PY})
    here = tree_blobs(ws, "HEAD")
    env_root = tmp_path / "env"
    built = tmp_path / "built" / "calc"
    built.mkdir(parents=True)
    names = ["fast.cpython-312-x86_64-linux-gnu.so", "slow.cpython-312-x86_64-linux-gnu.so"]
    for name in names:
        (built / name).write_text("compiled")
    env_root.mkdir()
    with tarfile.open(env_root / OVERLAY_NAME, "w") as tar:
        for name in names:
            tar.add(built / name, arcname=f"calc/{name}")
    # Built from a commit whose fast.py differed and whose slow.py is this one.
    (env_root / SOURCES_NAME).write_text(json.dumps({"calc/fast.py": "0" * 40, "calc/slow.py": here["calc/slow.py"]}))
    apply_overlay(env_root, ws)
    # slow's compiled module goes with fast's: built together, each reaches into the other.
    assert sorted(p.name for p in (ws / "calc").glob("*.so")) == []
    # Built from this very tree: both stay.
    (env_root / SOURCES_NAME).write_text(json.dumps(here))
    apply_overlay(env_root, ws)
    assert sorted(p.name for p in (ws / "calc").glob("*.so")) == names


@pytest.mark.slow
@pytest.mark.network
def test_a_fix_to_a_compiled_modules_source_is_validated_and_resolved(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from issuebench.sandbox import get_sandbox

    try:
        get_sandbox()
    except Exception as exc:
        pytest.skip(f"no sandbox: {exc}")
    if not {"3.10", "3.11", "3.12"} & set(installed_minors()) or shutil.which("cc") is None:
        pytest.skip("needs Python 3.10 to 3.12 and a C compiler")
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    repos = tmp_path / "repos"
    repo = Repo(repos / "acme__calc")
    repo.commit("init", {"setup.py": SETUP_PY, "build_ext.py": BUILD_EXT, "calc/__init__.py": "", "calc/_fast.c": FAST_C,
                         "calc/fast.py": FAST_PY, "tests/test_calc.py": TESTS}, date=DATE)
    repo.commit("Fix add (#1)", {"calc/fast.py": FAST_PY.replace("a - b", "a + b"),
                                 "tests/test_calc.py": TESTS + FIX_TEST}, date=DATE)
    env, kept, status = run_factory(tmp_path, repos, "acme__calc", "acme__calc-1")
    assert env["pre_test"] == []
    assert kept["FAIL_TO_PASS"] == ["tests/test_calc.py::test_add"]
    assert status == "resolved"
