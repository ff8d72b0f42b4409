"""Retrieval baselines: BM25 (or oracle) files + a prompt + one model call → a patch that applies.

`run_infer` writes DIR/preds.jsonl for `eval`, the prompts it sent, and optionally the retrieval
dataset (the tasks with a `text` column)."""

from __future__ import annotations

from issuebench.infer.extract import Extraction, extract_patch
from issuebench.infer.prompts import STYLES, Prompt, build_prompt
from issuebench.infer.retrieval import BM25Retriever, OracleRetriever, Retrieved, Retriever, get_retriever
from issuebench.infer.run import InferConfig, InferResult, infer_one, run_infer

__all__ = [
    "STYLES",
    "BM25Retriever",
    "Extraction",
    "InferConfig",
    "InferResult",
    "OracleRetriever",
    "Prompt",
    "Retrieved",
    "Retriever",
    "build_prompt",
    "extract_patch",
    "get_retriever",
    "infer_one",
    "run_infer",
]
