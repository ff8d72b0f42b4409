"""The embedded demo dataset: three small Python projects, 12 tasks and ready-made predictions.

Everything ships inside the package (`data/`, made by scripts/build_demo.py), so the demo works
offline on a fresh install:

- `<project>.bundle`: each project's git history (textkit, tinycalc, spans), standard library only;
- `tasks.jsonl`: SWE-bench rows plus an `env` (EnvSpec) that installs nothing and runs
  `python -m unittest -v` on the test files the test patch touches;
- `mixed.jsonl` (model "demo-mixed"): one prediction per task, each written to get a known
  verdict: `expected_mixed.json` maps instance id to that status, and
  `expected_mixed_details.json` adds the outcome category, patch status and why;
- `empty.jsonl` (model "demo-empty"): an empty patch for every task.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from issuebench import config
from issuebench.errors import InputError, IssuebenchError, MissingSystemPiece
from issuebench.models import Prediction, Task

ModelT = TypeVar("ModelT", bound=BaseModel)

DEMO_OWNER = "issuebench-demo"
PREDICTION_SETS = ("gold", "mixed", "empty")
# Written inside each unpacked clone's .git: the digest of the bundle it came from, so a newer
# issuebench with new demo data replaces the clone instead of reusing a stale one.
STAMP_FILE = "issuebench-demo-bundle"

try:  # POSIX: serialize the unpacking between processes; elsewhere the atomic rename suffices.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def data_dir() -> Path:
    return Path(__file__).resolve().parent / "data"


def demo_bundles() -> list[Path]:
    return sorted(data_dir().glob("*.bundle"))


def demo_tasks() -> list[Task]:
    """The demo tasks, validated like any dataset."""
    return _load(data_dir() / "tasks.jsonl", Task)


def demo_predictions(name: str) -> list[Prediction]:
    """A named prediction set: "mixed", "empty", or "gold" (each task's own patch)."""
    if name == "gold":  # built here, not through datasets, which itself reads the demo
        return [Prediction(instance_id=t.instance_id, model_name_or_path="gold", model_patch=t.patch)
                for t in demo_tasks()]
    if name not in PREDICTION_SETS:
        raise IssuebenchError(f"no demo predictions named {name!r}",
                              hint=f"use one of: {', '.join(PREDICTION_SETS)}")
    return _load(data_dir() / f"{name}.jsonl", Prediction)


def expected_mixed() -> dict[str, str]:
    """instance id -> the InstanceStatus value each demo-mixed prediction is written to get."""
    return json.loads((data_dir() / "expected_mixed.json").read_text(encoding="utf-8"))


def expected_mixed_details() -> dict[str, dict[str, Any]]:
    """instance id -> status, outcome, patch_status, apply_method and why, as measured at build time."""
    return json.loads((data_dir() / "expected_mixed_details.json").read_text(encoding="utf-8"))


def demo_repos_dir() -> Path:
    """A folder holding a clone of every demo project as `issuebench-demo__<name>`.

    Unpacked from the bundles once into the repository cache; later calls only check a stamp.
    Safe when several processes call it at once: each clone is made in a temporary folder and
    renamed into place under a file lock.
    """
    root = config.repos_cache_dir() / "demo"
    root.mkdir(parents=True, exist_ok=True)
    for bundle in demo_bundles():
        _ensure_clone(bundle, root / f"{DEMO_OWNER}__{bundle.stem}")
    return root


def _load(path: Path, model: type[ModelT]) -> list[ModelT]:
    """Validate every row; a damaged file names its line (the data is generated, so rebuild it)."""
    rows: list[ModelT] = []
    hint = "rebuild the demo data with scripts/build_demo.py, or reinstall issuebench"
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(model.model_validate(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON: {exc.msg}", line=number, hint=hint) from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or None
            raise InputError(path, first["msg"], line=number, field=field, hint=hint) from exc
    return rows


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stamp_of(clone: Path) -> str | None:
    try:
        return (clone / ".git" / STAMP_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _git(*args: str, cwd: Path | None = None) -> None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    try:
        proc = subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "advice.detachedHead=false", *args],
                              cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    except FileNotFoundError as exc:
        raise MissingSystemPiece("git is needed to unpack the demo repositories",
                                 hint="install git (e.g. apt-get install git)") from exc
    if proc.returncode != 0:
        raise IssuebenchError(f"git {' '.join(args[:2])} failed: {proc.stderr.strip()[-400:]}",
                              hint="the demo data may be damaged; reinstall issuebench")


def _ensure_clone(bundle: Path, dest: Path) -> None:
    digest = _digest(bundle)
    if _stamp_of(dest) == digest:
        return
    with _locked(dest.parent / f".{dest.name}.lock"):
        if _stamp_of(dest) == digest:  # another process unpacked it while we waited
            return
        work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
        try:
            clone = work / "repo"
            _git("clone", "--quiet", str(bundle), str(clone))
            # The clone stands alone: no remote pointing into the installed package.
            _git("remote", "remove", "origin", cwd=clone)
            (clone / ".git" / STAMP_FILE).write_text(digest + "\n", encoding="utf-8")
            if dest.exists():
                os.rename(dest, work / "stale")
            os.rename(clone, dest)
        finally:
            shutil.rmtree(work, ignore_errors=True)

__all__ = [
    "DEMO_OWNER",
    "PREDICTION_SETS",
    "STAMP_FILE",
    "data_dir",
    "demo_bundles",
    "demo_predictions",
    "demo_repos_dir",
    "demo_tasks",
    "expected_mixed",
    "expected_mixed_details",
]
