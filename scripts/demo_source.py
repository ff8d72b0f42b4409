"""The demo projects as build_demo.py reads them from scripts/demo_projects/ (data, not code).

    demo_projects/<name>/project.toml       name, author, [[commits]] (message, date, tag)
    demo_projects/<name>/commits/<i>/...     the full contents of the files commit i adds or changes
    demo_projects/<name>/tasks/<n>.toml      a task: the issue, the gold fix and the tests as edits
                                             on its base commit, and its demo-mixed prediction
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from issuebench.models import InstanceStatus, PatchStatus
from issuebench.tomlcompat import tomllib

PROJECTS_DIR = Path(__file__).resolve().parent / "demo_projects"
# The order the projects are built in (it is the order of the rows in tasks.jsonl).
PROJECT_ORDER = ("textkit", "tinycalc", "spans")


@dataclass
class Commit:
    message: str
    date: str  # ISO 8601 with offset; used for author and committer
    files: dict[str, str]  # full contents of the files this commit adds or changes
    tag: str | None = None


@dataclass
class Edit:
    """Replace `old` (which must occur exactly once) by `new` in `path`; old="" appends."""

    path: str
    old: str
    new: str


@dataclass
class Mixed:
    """The demo-mixed prediction for a task and the verdict it is written to get."""

    kind: str  # "edits" | "raw" | "bad_counts" (gold with wrong @@ counts) | "offset" (edits, shifted lines)
    status: InstanceStatus
    why: str
    outcome: str | None = None
    patch_status: PatchStatus | None = None
    edits: list[Edit] = field(default_factory=list)
    raw: str = ""


@dataclass
class TaskDef:
    number: int
    base: int  # index into the project's commits
    version: str
    setup: int  # environment_setup_commit, index into the commits
    created_at: str
    problem_statement: str
    gold: list[Edit]
    tests: list[Edit]
    mixed: Mixed
    hints_text: str = ""


@dataclass
class Project:
    name: str
    author: str
    commits: list[Commit]
    tasks: list[TaskDef]


def _edits(items: list[dict]) -> list[Edit]:
    return [Edit(e["path"], e["old"], e["new"]) for e in items]


def _commit_files(folder: Path) -> dict[str, str]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in files}


def _task(path: Path) -> TaskDef:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    m = data["mixed"]
    mixed = Mixed(kind=m["kind"], status=InstanceStatus(m["status"]), why=m["why"], outcome=m.get("outcome"),
                  patch_status=PatchStatus(m["patch_status"]) if "patch_status" in m else None,
                  edits=_edits(m.get("edits", [])), raw=m.get("raw", ""))
    return TaskDef(number=data["number"], base=data["base"], version=data["version"], setup=data["setup"],
                   created_at=data["created_at"], problem_statement=data["problem_statement"],
                   gold=_edits(data["gold"]), tests=_edits(data["tests"]), mixed=mixed,
                   hints_text=data.get("hints_text", ""))


def load_project(folder: Path) -> Project:
    meta = tomllib.loads((folder / "project.toml").read_text(encoding="utf-8"))
    commits = [Commit(message=c["message"], date=c["date"], tag=c.get("tag"),
                      files=_commit_files(folder / "commits" / str(i)))
               for i, c in enumerate(meta["commits"])]
    tasks = sorted((_task(p) for p in (folder / "tasks").glob("*.toml")), key=lambda t: t.number)
    return Project(name=meta["name"], author=meta["author"], commits=commits, tasks=tasks)


def load_projects(root: Path = PROJECTS_DIR) -> list[Project]:
    return [load_project(root / name) for name in PROJECT_ORDER]
