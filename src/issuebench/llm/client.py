"""The one model client: any OpenAI-compatible chat endpoint, through the `openai` package.

Every caller (setup's model step, infer, agent) gets a `Reply` with token usage and dollar cost.
Rate limits, server errors, timeouts and dropped connections are retried with exponential
backoff; when the retries run out they raise `ModelAPIError`, which callers record as an
infrastructure status ("api_error") and never as the task's failure.
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from issuebench.errors import IssuebenchError
from issuebench.llm.prices import DEFAULT_PRICES, price_of

Message = dict[str, str]


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cost: float = 0.0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.calls += other.calls
        self.cost += other.cost

    def as_dict(self) -> dict[str, Any]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "calls": self.calls, "cost": round(self.cost, 8)}


@dataclass
class Reply:
    content: str
    usage: Usage
    model: str
    attempts: int = 1          # 1 + the retries this call needed
    notes: list[str] = field(default_factory=list)

    @property
    def cost(self) -> float:
        return self.usage.cost


class ModelAPIError(IssuebenchError):
    """The endpoint failed (after retries, where retrying makes sense): an infrastructure fault."""

    def __init__(self, message: str, *, kind: str, attempts: int = 1, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind          # rate_limit | server_error | timeout | connection | refused | bad_answer
        self.attempts = attempts


class Model(Protocol):
    name: str

    def query(self, messages: list[Message], *, max_tokens: int | None = None) -> Reply: ...


def estimate_tokens(text: str) -> int:
    """About four characters per token for English and code: used only where no tokenizer answers."""
    return (len(text) + 3) // 4


@dataclass
class RetryPolicy:
    retries: int = 6           # attempts after the first
    backoff: float = 1.0       # seconds before the first retry; doubles each time
    max_backoff: float = 60.0
    jitter: float = 0.25       # +- this fraction, so parallel workers do not retry in lockstep

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None and 0 <= retry_after <= self.max_backoff:
            return retry_after
        base = min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))
        return base * (1 + random.uniform(-self.jitter, self.jitter))


class OpenAIModel:
    """A chat model behind an OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp, a loopback server)."""

    def __init__(self, name: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 300.0, temperature: float = 0.0, retry: RetryPolicy | None = None,
                 prices: Path = DEFAULT_PRICES) -> None:
        import openai  # imported here: the package is heavy and most commands never call a model

        self.name = name
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and self.base_url is None:
            raise IssuebenchError(f"model {name!r} needs an endpoint or a key",
                                  hint="set OPENAI_API_KEY, or pass --base-url for a local endpoint")
        self.temperature = temperature
        self.retry = retry or RetryPolicy()
        self.price = price_of(name, prices)
        self._timeout, self._prices = timeout, prices
        self._openai = openai
        # Our own retry loop, not the package's: backoff and the error kinds are ours to report.
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key or "none", timeout=timeout,
                                     max_retries=0)
        self._lock = threading.Lock()
        self.total = Usage()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Shipped to another process (a Ray worker) as the arguments that made it: the client is
        # rebuilt there and the key read from that process's environment (the executor forwards
        # it by name), so a key never travels inside a record.
        return (_rebuild, (self.name, self.base_url, self._timeout, self.temperature, self.retry, self._prices))

    def query(self, messages: list[Message], *, max_tokens: int | None = None) -> Reply:
        oa = self._openai
        attempt = 0
        while True:
            attempt += 1
            try:
                kwargs: dict[str, Any] = {"model": self.name, "messages": messages,
                                          "temperature": self.temperature}
                if max_tokens:
                    kwargs["max_tokens"] = max_tokens
                response = self._client.chat.completions.create(**kwargs)
                return self._reply(response, messages, attempt)
            except oa.RateLimitError as exc:
                kind, retry_after, what = "rate_limit", _retry_after(exc), "rate limit (HTTP 429)"
            except oa.InternalServerError as exc:
                kind, retry_after = "server_error", _retry_after(exc)
                what = f"server error (HTTP {exc.status_code})"
            except oa.APITimeoutError:
                kind, retry_after, what = "timeout", None, "timeout"
            except oa.APIConnectionError:
                kind, retry_after, what = "connection", None, "connection failure"
            except oa.APIStatusError as exc:  # 4xx other than 429: retrying cannot help
                raise ModelAPIError(f"model endpoint refused the request: HTTP {exc.status_code} "
                                    f"{_short(exc.message)}", kind="refused", attempts=attempt,
                                    hint="check --model, --base-url and OPENAI_API_KEY") from None
            except oa.OpenAIError as exc:
                raise ModelAPIError(f"model endpoint failed: {_short(str(exc))}", kind="bad_answer",
                                    attempts=attempt) from None
            if attempt > self.retry.retries:
                raise ModelAPIError(f"model endpoint {self.base_url or 'default'}: {what} after {attempt} attempts",
                                    kind=kind, attempts=attempt,
                                    hint="an infrastructure fault: rerun the same command to retry")
            time.sleep(self.retry.delay(attempt, retry_after))

    def _reply(self, response: Any, messages: list[Message], attempts: int) -> Reply:
        try:
            content = response.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            raise ModelAPIError("model endpoint gave no choices[0].message.content", kind="bad_answer",
                                attempts=attempts) from None
        notes: list[str] = []
        raw = getattr(response, "usage", None)
        prompt = getattr(raw, "prompt_tokens", None)
        completion = getattr(raw, "completion_tokens", None)
        if prompt is None or completion is None:
            # Some local servers report no usage; an estimate beats a silent zero in a cost report.
            prompt = estimate_tokens("".join(m.get("content", "") for m in messages))
            completion = estimate_tokens(content)
            notes.append("usage estimated (the endpoint reported none)")
        usage = Usage(int(prompt), int(completion), 1, self.price.cost(int(prompt), int(completion)))
        with self._lock:
            self.total.add(usage)
        return Reply(content=content, usage=usage, model=self.name, attempts=attempts, notes=notes)


def _rebuild(name: str, base_url: str | None, timeout: float, temperature: float, retry: RetryPolicy,
             prices: Path) -> OpenAIModel:
    return OpenAIModel(name, base_url=base_url, timeout=timeout, temperature=temperature, retry=retry,
                       prices=prices)


def _retry_after(exc: Any) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"
