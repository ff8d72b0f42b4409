"""A suite that mostly fails on the versions the task's date allows is tried next on the versions
the repository's own lockfile holds (bleak-retry-connector 4.4: `bleak>=1` drew bleak 2, whose
internals its tests patch had gone; poetry.lock held bleak 1.1.1, and with it 54 of 54 passed)."""

from __future__ import annotations

import json
from pathlib import Path

from issuebench.models import EnvSpec, TestStatus
from issuebench.setup.extract import extract
from issuebench.setup.lockfile_pins import LOCK_NOTE, locked_versions, pinned_to_lock
from issuebench.setup.plan import Plan
from issuebench.setup.runner import Run
from issuebench.setup.search import Attempt, Limits, Search
from issuebench.setup.source import SourceTree
from tests.gitrepo import init_repo

PYPROJECT = ("[build-system]\nrequires = ['poetry-core>=2']\nbuild-backend = 'poetry.core.masonry.api'\n\n"
             "[tool.poetry]\nname = 'pkg'\nversion = '1.0'\n\n[tool.poetry.dependencies]\npython = '>=3.10'\n"
             "bleak = '>=1'\n")
POETRY_LOCK = ('[[package]]\nname = "bleak"\nversion = "1.1.1"\n\n'
               '[[package]]\nname = "Async_Timeout"\nversion = "5.0.1"\n\n[metadata]\nlock-version = "2.1"\n')
UV_LOCK = ('version = 1\n\n[[package]]\nname = "pkg"\nversion = "1.0"\nsource = { editable = "." }\n\n'
           '[[package]]\nname = "bleak"\nversion = "1.1.1"\nsource = { registry = "https://pypi.org/simple" }\n\n'
           '[[package]]\nname = "numpy"\nversion = "2.0.2"\nresolution-markers = ["python_full_version < \'3.10\'"]\n\n'
           '[[package]]\nname = "numpy"\nversion = "2.2.6"\nresolution-markers = ["python_full_version >= \'3.10\'"]\n')


def _tree(path: Path, files: dict[str, str]) -> SourceTree:
    init_repo(path, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "",
                     "tests/test_pkg.py": "def test_x():\n    pass\n", **files}, date="2026-01-07T00:00:00Z")
    return SourceTree.open(path, "HEAD")


def _failing_run() -> Run:
    statuses = {f"tests/test_pkg.py::test_{i}": TestStatus.PASSED for i in range(33)}
    statuses |= {f"tests/test_pkg.py::test_broken_{i}": TestStatus.FAILED for i in range(21)}
    return Run("test", log="AttributeError: module 'bleak.backends.scanner' has no attribute 'platform'",
               statuses=statuses)


def _next_fix(tree: SourceTree, plan: Plan):
    search = Search(runner=None, tree=tree, facts=extract(tree), queue=[],  # type: ignore[arg-type]
                    client=None, limits=Limits(4, 0.95, 5, None, None))
    attempt = Attempt(iteration=1, origin="extracted", python="3.13", stage="test")
    return search._next_fix(_failing_run(), plan, attempt, "61% of the judged tests passed (needs 95%)")


def _plan() -> Plan:
    spec = EnvSpec(python="3.13", packages=["poetry-core>=2", "bleak>=1", "async-timeout>=3; python_version < '3.11'",
                                             "pytest==8.4.2"])
    return Plan(spec=spec, runner="pytest", pythons=["3.13", "3.12", "3.11"])


def test_a_failing_suite_is_tried_next_on_the_versions_the_lockfile_holds(tmp_path: Path) -> None:
    fix = _next_fix(_tree(tmp_path / "r", {"poetry.lock": POETRY_LOCK}), _plan())
    assert fix is not None
    assert fix.plan.spec.python == "3.13"                    # the lock first, not another Python
    packages = fix.plan.spec.packages
    assert "bleak==1.1.1" in packages
    assert 'async-timeout==5.0.1; python_version < "3.11"' in packages   # its marker kept
    assert "pytest==8.4.2" in packages and "poetry-core>=2" in packages  # what the lock does not name stays
    assert "poetry.lock" in fix.description


def test_without_a_lockfile_the_next_try_is_another_python(tmp_path: Path) -> None:
    fix = _next_fix(_tree(tmp_path / "r", {}), _plan())
    assert fix is not None and fix.plan.spec.python != "3.13"
    assert "bleak>=1" in fix.plan.spec.packages


def test_uv_and_pipfile_locks_are_read_the_project_and_forked_versions_left_out(tmp_path: Path) -> None:
    name, versions = locked_versions(_tree(tmp_path / "uv", {"uv.lock": UV_LOCK}))
    assert (name, versions) == ("uv.lock", {"bleak": "1.1.1"})
    pipfile = json.dumps({"default": {"bleak": {"version": "==1.1.1"}}, "develop": {"pytest": {"version": "==8.0.0"},
                                                                                   "bleak": {"version": "==0.9"}}})
    name, versions = locked_versions(_tree(tmp_path / "pipenv", {"Pipfile.lock": pipfile}))
    assert (name, versions) == ("Pipfile.lock", {"bleak": "1.1.1", "pytest": "8.0.0"})
    assert locked_versions(_tree(tmp_path / "broken", {"poetry.lock": "[[package]\n"})) == ("", {})


def test_pins_keep_extras_and_leave_exact_pins_and_urls_alone() -> None:
    packages, pins = pinned_to_lock(["requests[socks]>=2", "bleak==0.22", "git+https://example.invalid/x.git"],
                                    {"requests": "2.31.0", "bleak": "1.1.1"})
    assert packages == ["requests[socks]==2.31.0", "bleak==0.22", "git+https://example.invalid/x.git"]
    assert pins == ["requests==2.31.0"]


def test_a_recipe_pinned_to_its_commits_lock_is_not_taken_by_a_group_that_reads_the_same(monkeypatch) -> None:
    # bleak-retry-connector: 4.4's lock held bleak 1.1.1, 4.5's bleak 2; the requirements read the same.
    from issuebench.collect import environments
    from issuebench.collect.mine import CollectOptions
    from issuebench.collect.pipeline import PipelineTable
    from issuebench.models import Task

    searched: list[str] = []
    notes: list[str] = []

    def setup_group(repo_dir, task, opts):
        searched.append(task.version)
        return EnvSpec(packages=["bleak==1.1.1"], notes=notes), {"accepted": True}

    monkeypatch.setattr(environments, "_setup_group", setup_group)
    monkeypatch.setattr(environments, "setup_fingerprint", lambda repo_dir, commit: "the same")
    monkeypatch.setattr(environments, "remember_recipe", lambda *args, **kwargs: None)
    for note, expected in ((f"{LOCK_NOTE} poetry.lock: bleak==1.1.1", ["4.4", "4.5"]), ("", ["4.4"])):
        searched.clear()
        notes[:] = [note] if note else []
        tasks = [Task(instance_id=f"o__r-{n}", repo="o/r", base_commit=c * 40, version=v,
                      created_at="2026-01-07T00:00:00Z") for n, c, v in ((1, "a", "4.4"), (2, "b", "4.5"))]
        environments.attach_environments(Path("."), tasks, CollectOptions(), PipelineTable())
        assert searched == expected


def test_a_remembered_recipe_pinned_to_its_lock_takes_this_commits_locked_versions(tmp_path: Path) -> None:
    from issuebench.setup.loop import _remembered_plans
    from issuebench.setup.memory import RecipeMemory

    tree = _tree(tmp_path / "r", {"poetry.lock": POETRY_LOCK.replace('"1.1.1"', '"2.0.1"')})
    store = RecipeMemory(tmp_path / "memory.sqlite")
    for repo, notes in (("o/pinned", [f"{LOCK_NOTE} poetry.lock: bleak==1.1.1"]), ("o/plain", [])):
        spec = EnvSpec(python="3.13", packages=["bleak==1.1.1", "pytest>=8"], notes=notes)
        store.save(repo, "a" * 40, "2026-01-01T00:00:00Z", spec, "pytest", [], 54, 54)
    pinned, = _remembered_plans(store, "o/pinned", "2026-03-01T00:00:00Z", extract(tree), ["3.13"], tree)
    assert pinned.spec.packages == ["bleak==2.0.1", "pytest>=8"]
    plain, = _remembered_plans(store, "o/plain", "2026-03-01T00:00:00Z", extract(tree), ["3.13"], tree)
    assert plain.spec.packages == ["bleak==1.1.1", "pytest>=8"]    # the project's own pin: kept
