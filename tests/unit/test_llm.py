"""The model client against a real loopback chat-completions server: usage, cost, retries, faults."""

from __future__ import annotations

import json
import warnings

import pytest

from issuebench.errors import InputError
from issuebench.llm import LoopbackServer, ModelAPIError, OpenAIModel, ReplayModel, RetryPolicy, price_of
from issuebench.llm.prices import Price

FAST = RetryPolicy(retries=4, backoff=0.01, max_backoff=0.05)
SCRIPT = {
    "model": "replay",
    "conversations": [
        {"match": "issue A", "answers": [{"content": "first", "prompt_tokens": 1000, "completion_tokens": 500},
                                         "second"]},
        {"match": "issue B", "answers": ["only"]},
    ],
}


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


def test_prices_match_names_and_unknown_models_are_free_with_one_warning() -> None:
    assert price_of("gpt-4o-mini") == Price(0.15, 0.60)
    assert price_of("gpt-4o-2024-08-06") == price_of("gpt-4o")  # dated snapshots
    assert price_of("openai/gpt-4o-mini") == Price(0.15, 0.60)  # provider prefixes
    assert price_of("gpt-4o-mini").cost(1_000_000, 1_000_000) == pytest.approx(0.75)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert price_of("my-local-llama") == Price(0.0, 0.0)
        assert price_of("my-local-llama") == Price(0.0, 0.0)
    assert len([w for w in caught if "my-local-llama" in str(w.message)]) == 1


def test_replay_answers_by_conversation_and_turn_and_repeats_the_last() -> None:
    model = ReplayModel(SCRIPT)
    a0 = model.query(user("this is issue A"))
    assert a0.content == "first" and (a0.usage.prompt_tokens, a0.usage.completion_tokens) == (1000, 500)
    assert a0.cost == pytest.approx((1000 * 1.0 + 500 * 2.0) / 1e6)  # the replay price of the table
    turn1 = [*user("this is issue A"), {"role": "assistant", "content": "first"}, {"role": "user", "content": "ok"}]
    assert model.query(turn1).content == "second"
    turn5 = turn1 + [{"role": "assistant", "content": "x"}] * 4
    assert model.query(turn5).content == "second"
    assert model.query(user("issue B here")).content == "only"
    with pytest.raises(ModelAPIError):
        model.query(user("nobody scripted this"))


def test_a_bad_script_names_the_file_and_the_field(tmp_path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"conversations": [{"match": "x", "answers": [42]}]}))
    with pytest.raises(InputError, match=r"script\.json.*conversations\[0\]\.answers\[0\]"):
        ReplayModel.from_file(path)


def test_429_500_and_slow_answers_are_retried_and_the_call_succeeds() -> None:
    with LoopbackServer(ReplayModel(SCRIPT), faults=["429", "500", "slow:2", "drop"]) as server:
        model = OpenAIModel("replay", base_url=server.url, timeout=0.5, retry=FAST)
        reply = model.query(user("issue A"))
    assert reply.content == "first"
    assert reply.attempts == 5 and server.fault_log == ["429", "500", "slow:2", "drop"]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (1000, 500)  # the server's usage
    assert reply.cost == pytest.approx(0.002)
    assert model.total.calls == 1 and model.total.cost == pytest.approx(0.002)


def test_retries_run_out_into_an_infrastructure_error_naming_the_fault() -> None:
    with LoopbackServer(ReplayModel(SCRIPT), faults=["503"] * 10) as server:
        model = OpenAIModel("replay", base_url=server.url, timeout=5.0, retry=RetryPolicy(retries=2, backoff=0.01))
        with pytest.raises(ModelAPIError, match=r"HTTP 503.*3 attempts") as info:
            model.query(user("issue A"))
    assert info.value.kind == "server_error" and server.requests == 3


def test_a_refused_request_is_not_retried() -> None:
    with LoopbackServer(ReplayModel(SCRIPT)) as server:  # no scripted answer: HTTP 400
        model = OpenAIModel("replay", base_url=server.url, retry=FAST)
        with pytest.raises(ModelAPIError, match="HTTP 400") as info:
            model.query(user("nobody scripted this"))
    assert info.value.kind == "refused" and server.requests == 1
