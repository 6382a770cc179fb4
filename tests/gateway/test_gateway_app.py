"""The gateway app over real HTTP: the anthropic and openai SDKs against a scripted upstream."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import orjson
import pytest

from slimtools.clearing import ClearingPolicy, is_placeholder
from slimtools.gateway import create_app
from tests.gateway.gateway_upstream import FakeUpstream, Script, create_upstream, serve

TOKEN = "stats-token"
POLICY = ClearingPolicy(cache=None, keep_turns=1, retention={"read_log": 1})
ANTHROPIC_TOOLS: list[Any] = [
    {
        "name": "read_log",
        "description": "Read a log file.",
        "input_schema": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
]
OPENAI_TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "read_log",
            "description": "Read a log file.",
            "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }
]


def log_text(name: str) -> str:
    """A large tool result (about 6,000 characters)."""
    return "\n".join(f"line {i} of {name}: status ok, latency {i % 97} ms" for i in range(150))


@pytest.fixture
def fake() -> FakeUpstream:
    """A fresh scripted upstream: five rounds of read_log calls."""
    return FakeUpstream(Script(rounds=5))


@pytest.fixture
def gateway(fake: FakeUpstream) -> Iterator[str]:
    """The gateway's base URL, in front of the fake upstream."""
    with serve(create_upstream(fake)) as upstream, \
            serve(create_app(upstream, POLICY, stats_token=TOKEN)) as url:  # fmt: skip
        yield url


def stats_of(url: str) -> Any:
    """The gateway's ``/slimtools/stats``, asked with its token."""
    return httpx.get(url + "/slimtools/stats", headers={"authorization": f"Bearer {TOKEN}"}).json()


def anthropic_run(url: str, *, stream: bool) -> list[dict[str, Any]]:
    """Run the scripted tool loop with the anthropic SDK; returns the agent's history."""
    client = anthropic.Anthropic(base_url=url, api_key="sk-ant-secret", max_retries=0)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Read the logs."}]
    for _ in range(10):
        if stream:
            with client.messages.stream(
                model="m", max_tokens=64, messages=history, tools=ANTHROPIC_TOOLS
            ) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(
                model="m", max_tokens=64, messages=history, tools=ANTHROPIC_TOOLS
            )
        content = [b.model_dump(exclude_none=True) for b in message.content]
        history.append({"role": "assistant", "content": content})
        uses = [b for b in message.content if b.type == "tool_use"]
        if not uses:
            return history
        history.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": u.id,
                        "content": log_text(u.input["name"]),
                    }
                    for u in uses
                ],
            }
        )
    raise AssertionError("the scripted run did not end")


def openai_chat_run(url: str, *, stream: bool) -> list[dict[str, Any]]:
    """Run the scripted tool loop with the openai SDK's Chat Completions."""
    client = openai.OpenAI(base_url=url + "/v1", api_key="sk-secret", max_retries=0)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Read the logs."}]
    for _ in range(10):
        if stream:
            chunks = client.chat.completions.create(
                model="m", messages=history, tools=OPENAI_TOOLS, stream=True,
                stream_options={"include_usage": True},
            )  # fmt: skip
            calls: list[dict[str, Any]] = []
            for chunk in chunks:
                for choice in chunk.choices:
                    for call in choice.delta.tool_calls or []:
                        assert call.function is not None
                        calls.append(
                            {"id": call.id, "type": "function",
                             "function": {"name": call.function.name,
                                          "arguments": call.function.arguments}}
                        )  # fmt: skip
        else:
            answer = client.chat.completions.create(model="m", messages=history, tools=OPENAI_TOOLS)
            calls = [c.model_dump() for c in answer.choices[0].message.tool_calls or []]
        history.append({"role": "assistant", "content": None, "tool_calls": calls} if calls else
                       {"role": "assistant", "content": "All done."})  # fmt: skip
        if not calls:
            return history
        for call in calls:
            name = orjson.loads(call["function"]["arguments"])["name"]
            history.append({"role": "tool", "tool_call_id": call["id"], "content": log_text(name)})
    raise AssertionError("the scripted run did not end")


def openai_responses_run(url: str, *, stream: bool) -> list[Any]:
    """Run the scripted tool loop with the openai SDK's Responses (input items)."""
    client = openai.OpenAI(base_url=url + "/v1", api_key="sk-secret", max_retries=0)
    tools: list[Any] = [{"type": "function", "name": "read_log", "parameters": {"type": "object"}}]
    items: list[Any] = [{"role": "user", "content": "Read the logs."}]
    for _ in range(10):
        if stream:
            done = None
            for event in client.responses.create(model="m", input=items, tools=tools, stream=True):
                if event.type == "response.completed":
                    done = event.response
            assert done is not None
            output = done.output
        else:
            output = client.responses.create(model="m", input=items, tools=tools).output
        items += [o.model_dump(exclude_none=True) for o in output]
        calls = [o for o in output if o.type == "function_call"]
        if not calls:
            return items
        for call in calls:
            name = orjson.loads(call.arguments)["name"]
            items.append(
                {"type": "function_call_output", "call_id": call.call_id, "output": log_text(name)}
            )
    raise AssertionError("the scripted run did not end")


def results_sent(body: Any, field: str = "messages") -> list[str]:
    """Every tool result's text in a request body, in order (Anthropic, Chat or Responses)."""
    out: list[str] = []
    for m in body[field]:
        if m.get("role") == "tool":
            out.append(m["content"])
        elif m.get("type") == "function_call_output":
            out.append(m["output"])
        elif isinstance(m.get("content"), list):
            out += [b["content"] for b in m["content"] if b.get("type") == "tool_result"]
    return out


def assert_cleared_from_round_after(requests: list[Any], field: str = "messages") -> None:
    """Round k's request holds results 1..k-1 cleared but its newest result whole."""
    bodies = [r.body for r in requests]
    assert len(bodies) == 6
    for k, body in enumerate(bodies):
        texts = results_sent(body, field)
        assert len(texts) == k
        assert all(is_placeholder(t) for t in texts[:-1])
        assert not texts or not is_placeholder(texts[-1])


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_sdk_run_is_cleared_upstream_only(
    gateway: str, fake: FakeUpstream, stream: bool
) -> None:
    """Through the gateway, stale results go upstream as placeholders; the agent keeps all."""
    history = anthropic_run(gateway, stream=stream)
    assert_cleared_from_round_after(fake.model_requests("/v1/messages"))
    kept = results_sent({"messages": history})
    assert len(kept) == 5
    assert not any(is_placeholder(t) for t in kept)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_openai_chat_sdk_run_is_cleared_upstream(
    gateway: str, fake: FakeUpstream, stream: bool
) -> None:
    """Chat Completions requests are cleared the same way, streamed or not."""
    history = openai_chat_run(gateway, stream=stream)
    assert_cleared_from_round_after(fake.model_requests("/v1/chat/completions"))
    assert not any(is_placeholder(t) for t in results_sent({"messages": history}))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_openai_responses_sdk_run_is_cleared_upstream(
    gateway: str, fake: FakeUpstream, stream: bool
) -> None:
    """Responses ``input`` items are cleared the same way, streamed or not."""
    openai_responses_run(gateway, stream=stream)
    assert_cleared_from_round_after(fake.model_requests("/v1/responses"), "input")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_stats_billed_match_the_upstream_count(
    gateway: str, fake: FakeUpstream, stream: bool
) -> None:
    """The usage the gateway reports billed is what the upstream reported, field by field."""
    anthropic_run(gateway, stream=stream)
    openai_chat_run(gateway, stream=stream)
    total = stats_of(gateway)["total"]
    assert total["billed"] == fake.billed
    assert total["requests"] == 12
    assert total["cleared"] == 8
    assert total["upstream_tokens"] < total["agent_tokens"]


def test_stats_model_the_cost_without_clearing(gateway: str) -> None:
    """Each conversation reports the ledger's no-clearing cost above what went upstream."""
    anthropic_run(gateway, stream=False)
    (row,) = stats_of(gateway)["conversations"]
    assert row["format"] == "anthropic"
    assert row["requests"] == 6
    assert row["modelled_read"] + row["modelled_write"] == row["agent_tokens"]
    assert row["modelled_cost_without_clearing"] > 0
    assert row["billed_cost"] > 0


def test_count_tokens_counts_the_cleared_request(gateway: str, fake: FakeUpstream) -> None:
    """``count_tokens`` goes upstream with the history cleared as a model call would be."""
    history = anthropic_run(gateway, stream=False)[:-1]
    client = anthropic.Anthropic(base_url=gateway, api_key="k", max_retries=0)
    counted = client.messages.count_tokens(model="m", messages=history)  # type: ignore[arg-type]
    sent = fake.model_requests("/v1/messages/count_tokens")[-1].body
    assert sent["messages"] == fake.model_requests("/v1/messages")[-1].body["messages"]
    assert counted.input_tokens == len(orjson.dumps(sent["messages"])) // 4


def test_other_paths_pass_unchanged_with_headers(gateway: str, fake: FakeUpstream) -> None:
    """A path the gateway does not clear goes upstream as is, headers both ways."""
    answer = httpx.put(
        gateway + "/v1/files/abc?x=1", content=b"raw bytes", headers={"x-api-key": "sk-1"}
    )
    assert answer.json() == {"path": "/v1/files/abc", "method": "PUT", "auth": "sk-1"}
    assert answer.headers["x-upstream"] == "fake"
    assert fake.received[-1].raw == b"raw bytes"


def test_auth_is_never_logged(
    gateway: str, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """Neither a model request nor a forwarded one logs the API key."""
    with caplog.at_level(logging.DEBUG):
        anthropic_run(gateway, stream=True)
        httpx.post(gateway + "/v1/messages", content=b"{not json", headers={"x-api-key": "sk-9"})
    assert "sk-ant-secret" not in caplog.text
    assert "sk-9" not in caplog.text


def test_unreadable_request_is_forwarded_unchanged_with_one_warning(
    gateway: str, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """A body that is not JSON goes upstream byte for byte, with one warning."""
    with caplog.at_level(logging.WARNING, logger="slimtools.gateway"):
        httpx.post(gateway + "/v1/chat/completions", content=b'{"messages": 3}')
    assert fake.received[-1].raw == b'{"messages": 3}'
    assert len([r for r in caplog.records if r.name == "slimtools.gateway"]) == 1
    assert stats_of(gateway)["unreadable"] == 1


def test_server_side_clearing_is_left_to_the_server(gateway: str, fake: FakeUpstream) -> None:
    """A request asking for ``clear_tool_uses`` goes unchanged, and the stats say so."""
    history = anthropic_run(gateway, stream=False)[:-1]
    body = {
        "model": "m",
        "max_tokens": 8,
        "messages": history,
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
    }
    raw = orjson.dumps(body)
    httpx.post(gateway + "/v1/messages", content=raw)
    assert fake.received[-1].raw == raw
    rows = stats_of(gateway)["conversations"]
    assert sum(r["server_cleared"] for r in rows) == 1


def test_previous_response_id_is_forwarded_and_noted(gateway: str, fake: FakeUpstream) -> None:
    """A Responses request continuing ``previous_response_id`` has nothing to clear."""
    body = {"model": "m", "previous_response_id": "resp_1", "input": [{"role": "user",
            "content": "go on"}]}  # fmt: skip
    raw = orjson.dumps(body)
    httpx.post(gateway + "/v1/responses", content=raw)
    assert fake.received[-1].raw == raw
    (row,) = stats_of(gateway)["conversations"]
    assert row["continued"] == 1
    assert row["requests"] == 0


def test_unknown_fields_and_system_messages_are_kept(gateway: str, fake: FakeUpstream) -> None:
    """Fields the gateway does not know, and system-role messages, reach the upstream."""
    history = anthropic_run(gateway, stream=False)[:-1]
    history.insert(1, {"role": "system", "content": "be brief"})
    body = {"model": "m", "max_tokens": 8, "messages": history, "tools": ANTHROPIC_TOOLS,
            "context_management": {"edits": [{"type": "clear_thinking_20251015"}]},
            "x_future_field": {"a": [1, 2]}}  # fmt: skip
    httpx.post(gateway + "/v1/messages", content=orjson.dumps(body))
    sent = fake.received[-1].body
    assert list(sent) == list(body)
    assert sent["x_future_field"] == {"a": [1, 2]}
    assert sent["context_management"] == body["context_management"]
    assert sent["messages"][1] == {"role": "system", "content": "be brief"}
    assert any(is_placeholder(t) for t in results_sent(sent))


def test_openai_routes_are_cleared_under_any_prefix(gateway: str, fake: FakeUpstream) -> None:
    """An OpenAI-compatible base URL without ``/v1`` is cleared all the same."""
    history = openai_chat_run(gateway, stream=False)[:-1]
    body = orjson.dumps({"model": "m", "messages": history})
    httpx.post(gateway + "/chat/completions", content=body)
    assert fake.received[-1].path == "/chat/completions"
    assert any(is_placeholder(t) for t in results_sent(fake.received[-1].body))


def test_integers_beyond_64_bits_reach_the_upstream_exactly(
    gateway: str, fake: FakeUpstream
) -> None:
    """A cleared request keeps an integer orjson cannot hold (an id past 64 bits) digit for
    digit: clearing changes the tool results and nothing else."""
    history = anthropic_run(gateway, stream=False)[:-1]
    history[1]["content"][0]["input"]["ref"] = 2**70 + 1
    body = {"model": "m", "max_tokens": 8, "messages": history, "metadata": {"n": 2**64}}
    httpx.post(gateway + "/v1/messages", content=json.dumps(body))
    sent = json.loads(fake.received[-1].raw)
    assert any(is_placeholder(t) for t in results_sent(sent))
    assert sent["messages"][1]["content"][0]["input"]["ref"] == 2**70 + 1
    assert sent["metadata"] == {"n": 2**64}
