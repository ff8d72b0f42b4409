"""The replay model: scripted answers from a file, for tests, the demo and reproducing a run.

A script is JSON:

    {"model": "replay",
     "conversations": [
        {"match": "text found in the conversation's first user message",
         "answers": ["first answer", {"content": "second", "prompt_tokens": 10, "completion_tokens": 5}]}
     ],
     "default": ["answers for a conversation no entry matches"]}

The answer for a request is chosen by the conversation it belongs to (the first entry whose
`match` occurs in the first user message) and by its turn (how many assistant messages it already
holds), so it needs no state: retries, resumed runs and parallel workers get the same answers.
Past the last answer the last one repeats. Usage not given is estimated at four characters a token.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench.errors import InputError
from issuebench.llm.client import Message, ModelAPIError, Reply, Usage, estimate_tokens
from issuebench.llm.prices import DEFAULT_PRICES, price_of


@dataclass
class ScriptedAnswer:
    content: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass
class Conversation:
    match: str
    answers: list[ScriptedAnswer] = field(default_factory=list)


def _answer(value: Any, where: str) -> ScriptedAnswer:
    if isinstance(value, str):
        return ScriptedAnswer(value)
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return ScriptedAnswer(value["content"], value.get("prompt_tokens"), value.get("completion_tokens"))
    raise ValueError(f"{where}: an answer is a string or an object with a string 'content'")


def parse_script(data: Any) -> tuple[str, list[Conversation], list[ScriptedAnswer]]:
    if not isinstance(data, dict):
        raise ValueError("a replay script is a JSON object with 'conversations' and/or 'default'")
    convs = []
    for i, conv in enumerate(data.get("conversations") or []):
        if not isinstance(conv, dict) or not isinstance(conv.get("match"), str):
            raise ValueError(f"conversations[{i}]: needs a string 'match'")
        answers = [_answer(a, f"conversations[{i}].answers[{j}]") for j, a in enumerate(conv.get("answers") or [])]
        if not answers:
            raise ValueError(f"conversations[{i}]: needs at least one answer")
        convs.append(Conversation(conv["match"], answers))
    default = [_answer(a, f"default[{j}]") for j, a in enumerate(data.get("default") or [])]
    return str(data.get("model") or "replay"), convs, default


class ReplayModel:
    """A deterministic stand-in for a chat model: same conversation, same answers, priced as `name`."""

    def __init__(self, script: dict[str, Any], *, name: str | None = None, prices: Path = DEFAULT_PRICES) -> None:
        try:
            script_name, self.conversations, self.default = parse_script(script)
        except ValueError as exc:
            raise InputError(None, f"replay script: {exc}") from None
        self.name = name or script_name
        self.price = price_of(self.name, prices)
        self._lock = threading.Lock()
        self.total = Usage()

    def __getstate__(self) -> dict[str, Any]:
        # Picklable (a Ray worker gets a copy): the lock is made anew on the other side.
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: Path, *, prices: Path = DEFAULT_PRICES) -> ReplayModel:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(path, f"cannot read the replay script: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
        try:
            return cls(data, prices=prices)
        except InputError as exc:
            raise InputError(path, exc.message.removeprefix("<input>: ")) from None

    def pick(self, messages: list[Message]) -> ScriptedAnswer | None:
        first_user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
        answers = next((c.answers for c in self.conversations if c.match in first_user), self.default)
        if not answers:
            return None
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        return answers[min(turn, len(answers) - 1)]

    def query(self, messages: list[Message], *, max_tokens: int | None = None) -> Reply:
        scripted = self.pick(messages)
        if scripted is None:
            raise ModelAPIError("the replay script has no answer for this conversation", kind="bad_answer")
        usage = usage_of(scripted, messages)
        usage.cost = self.price.cost(usage.prompt_tokens, usage.completion_tokens)
        with self._lock:
            self.total.add(usage)
        return Reply(content=scripted.content, usage=usage, model=self.name)


def usage_of(scripted: ScriptedAnswer, messages: list[Message]) -> Usage:
    prompt = scripted.prompt_tokens
    if prompt is None:
        prompt = estimate_tokens("".join(m.get("content", "") for m in messages))
    completion = scripted.completion_tokens
    if completion is None:
        completion = estimate_tokens(scripted.content)
    return Usage(int(prompt), int(completion), 1)
