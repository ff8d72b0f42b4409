"""Which files go into a prompt: BM25 over the repository at the base commit, or the oracle files.

BM25 follows the SWE-bench paper's "file-path-aware" documents (each file's path, then its text)
over the non-test Python files, with the problem statement as the query. The index is built with
`bm25s` once per (repository, commit) and cached on disk under the issuebench home.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from issuebench import config
from issuebench.errors import IssuebenchError
from issuebench.infer.repo_files import is_test_path, read_files, read_paths
from issuebench.models import Task, stable_hash
from issuebench.patch import files_touched

# Changes whenever documents or tokens are made differently: old indexes are then not reused.
INDEX_VERSION = "bm25s-path-content-1"
_build_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()


@dataclass
class Retrieved:
    path: str
    text: str
    score: float = 0.0


class Retriever(Protocol):
    name: str

    def retrieve(self, task: Task, repo_dir: Path, k: int) -> list[Retrieved]: ...


def document(path: str, text: str) -> str:
    return f"{path}\n{text}"


def _tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)


class BM25Index:
    """A bm25s index of one repository at one commit, with the paths of its documents."""

    def __init__(self, paths: list[str], retriever: object) -> None:
        self.paths = paths
        self.retriever = retriever

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        if not self.paths or k <= 0:
            return []
        tokens = _tokenize([query])
        if not tokens or not tokens[0]:
            return []
        ids, scores = self.retriever.retrieve(tokens, k=min(k, len(self.paths)), show_progress=False)  # type: ignore[attr-defined]
        return [(self.paths[int(i)], float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


def index_dir(repo_dir: Path, commit: str) -> Path:
    key = stable_hash([str(Path(repo_dir).resolve()), commit, INDEX_VERSION])[:24]
    return config.home() / "bm25" / key


def load_or_build_index(repo_dir: Path, commit: str) -> BM25Index:
    """The cached index of repo_dir at commit, built on first use (one builder per key at a time)."""
    import bm25s

    folder = index_dir(repo_dir, commit)
    key = folder.name
    with _locks_lock:
        lock = _build_locks.setdefault(key, threading.Lock())
    with lock:
        if (folder / "paths.json").is_file():
            paths = json.loads((folder / "paths.json").read_text(encoding="utf-8"))
            return BM25Index(paths, bm25s.BM25.load(str(folder)) if paths else None)
        files = read_files(str(repo_dir), commit)
        paths = sorted(files)
        retriever = None
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=folder.parent))
        if paths:
            retriever = bm25s.BM25()
            retriever.index(bm25s.tokenize([document(p, files[p]) for p in paths], stopwords="en",
                                           show_progress=False), show_progress=False)
            retriever.save(str(tmp))
        (tmp / "paths.json").write_text(json.dumps(paths), encoding="utf-8")
        try:
            tmp.rename(folder)
        except OSError:  # another process built it first
            shutil.rmtree(tmp, ignore_errors=True)
        return BM25Index(paths, retriever)


class BM25Retriever:
    name = "bm25"

    def retrieve(self, task: Task, repo_dir: Path, k: int) -> list[Retrieved]:
        index = load_or_build_index(repo_dir, task.base_commit)
        hits = index.search(task.problem_statement, k)
        texts = read_paths(str(repo_dir), task.base_commit, [p for p, _ in hits])
        return [Retrieved(p, texts[p], s) for p, s in hits if p in texts]


def oracle_paths(task: Task) -> list[str]:
    """The files the gold patch edits, tests excluded (as in the paper's oracle retrieval)."""

    return [p for p in files_touched(task.patch) if p != "/dev/null" and not is_test_path(p)]


class OracleRetriever:
    name = "oracle"

    def retrieve(self, task: Task, repo_dir: Path, k: int) -> list[Retrieved]:
        paths = oracle_paths(task)
        texts = read_paths(str(repo_dir), task.base_commit, paths)
        return [Retrieved(p, texts[p], 1.0) for p in paths if p in texts][: k or None]


def get_retriever(name: str) -> Retriever:
    if name == "bm25":
        return BM25Retriever()
    if name == "oracle":
        return OracleRetriever()

    raise IssuebenchError(f"unknown retrieval {name!r}", hint="use --retrieval bm25 or --retrieval oracle")
