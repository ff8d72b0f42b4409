"""One model client for the whole project, plus the test models that ship with it.

- `OpenAIModel` / `make_model`: any OpenAI-compatible endpoint, usage and cost per call, retries
  with backoff; API faults raise `ModelAPIError` (an infrastructure status, never a task failure).
- `ReplayModel`: scripted answers from a file; `LoopbackServer`: the same answers over HTTP,
  with injected 429s, 500s and slow answers.
- `solve_script`: a replay script that solves tasks with their gold patches (tests, the demo).
"""

from __future__ import annotations

from issuebench.llm.client import (
    Message,
    Model,
    ModelAPIError,
    OpenAIModel,
    Reply,
    RetryPolicy,
    Usage,
    estimate_tokens,
    make_model,
)
from issuebench.llm.prices import Price, price_of
from issuebench.llm.replay import ReplayModel
from issuebench.llm.scripts import solve_script
from issuebench.llm.server import LoopbackServer

__all__ = [
    "LoopbackServer",
    "Message",
    "Model",
    "ModelAPIError",
    "OpenAIModel",
    "Price",
    "ReplayModel",
    "Reply",
    "RetryPolicy",
    "Usage",
    "estimate_tokens",
    "make_model",
    "price_of",
    "solve_script",
]
