"""One model client for the whole project, plus the test models that ship with it.

- `OpenAIModel` / `make_model`: any OpenAI-compatible endpoint, usage and cost per call, retries
  with backoff; API faults raise `ModelAPIError` (an infrastructure status, never a task failure).
- `ReplayModel`: scripted answers from a file; `LoopbackServer`: the same answers over HTTP,
  with injected 429s, 500s and slow answers.
- `solve_script`: a replay script that solves tasks with their gold patches (tests, the demo).
"""

from __future__ import annotations

from pathlib import Path

from issuebench.llm.client import (
    Message,
    Model,
    ModelAPIError,
    OpenAIModel,
    Reply,
    RetryPolicy,
    Usage,
    estimate_tokens,
)
from issuebench.llm.prices import DEFAULT_PRICES, Price, price_of
from issuebench.llm.replay import ReplayModel
from issuebench.llm.scripts import SUBMIT_SENTINEL, solve_script
from issuebench.llm.server import LoopbackServer


def make_model(name: str, *, base_url: str | None = None, timeout: float = 300.0,
               retry: RetryPolicy | None = None, prices: Path = DEFAULT_PRICES) -> Model:
    """`replay:FILE` gives the in-process replay model; any other name an OpenAI-compatible endpoint."""
    if name.startswith("replay:"):
        return ReplayModel.from_file(Path(name.removeprefix("replay:")), prices=prices)
    return OpenAIModel(name, base_url=base_url, timeout=timeout, retry=retry, prices=prices)

__all__ = [
    "DEFAULT_PRICES",
    "SUBMIT_SENTINEL",
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
